-- ViewModel states (protocol/schemas) as buffer lines. Each function returns a list of strings.
local money = require('storefront.money')
local M = {}

local function present(value)
  return value ~= nil and value ~= vim.NIL
end

local function text(value, fallback)
  if present(value) then
    return tostring(value)
  end
  return fallback or '-'
end

local function error_lines(lines, err, label)
  if present(err) and type(err) == 'table' then
    lines[#lines + 1] = string.format('! %s%s%s', label or '', text(err.message), err.retryable and ' (retryable)' or '')
  end
end

--- A catalog row; the product id comes first so `<CR>` can read it back.
function M.product_row(product)
  return string.format('%-8s %-40s %9s%s', product.id, product.name, text(product.price),
    product.inStock == false and '  (out of stock)' or '')
end

function M.catalog(state)
  local lines = {
    string.format('Catalog  [%s]  search: %q  category: %s  sort: %s', text(state.phase), text(state.query, ''),
      text(state.category, 'all'), text(state.sort)),
    string.format('%d of %d products%s   <CR> open  a add to cart  / search', #(state.products or {}),
      state.totalCount or 0, state.hasMore and ' (more: L)' or ''),
  }
  error_lines(lines, state.error)
  lines[#lines + 1] = ''
  for _, product in ipairs(state.products or {}) do
    lines[#lines + 1] = M.product_row(product)
  end
  return lines
end

function M.productDetail(state)
  local lines = { string.format('Product  [%s]   a add to cart  + / - quantity  f favourite', text(state.phase)) }
  error_lines(lines, state.error)
  local product = state.product
  if present(product) then
    vim.list_extend(lines, {
      '',
      string.format('%s  %s', product.id, product.name),
      string.format('Price: %s   Category: %s', text(product.price), text(product.category)),
      string.format('Stock: %s   At most %s per order', text(product.stock), text(product.maxPerOrder)),
      '',
    })
    for _, line in ipairs(vim.split(text(product.description, ''), '\n', true)) do
      lines[#lines + 1] = line
    end
    lines[#lines + 1] = ''
    lines[#lines + 1] = string.format('Quantity: %s of %s   Total: %s%s%s', text(state.quantity), text(state.maxQuantity),
      text(state.totalPrice), state.isFavorite and '   * favourite' or '', state.isOutOfStock and '   (out of stock)' or '')
    if state.isAddingToCart then
      lines[#lines + 1] = 'Adding to cart...'
    elseif state.didAddToCart then
      lines[#lines + 1] = 'Added to cart.'
    end
  end
  return lines
end

function M.cart(state)
  local lines = { string.format('Cart  [%s]   x remove line  C checkout', text(state.phase)) }
  error_lines(lines, state.error)
  error_lines(lines, state.checkoutError, 'checkout: ')
  lines[#lines + 1] = ''
  if #(state.lines or {}) == 0 then
    lines[#lines + 1] = '(empty)'
  end
  for _, line in ipairs(state.lines or {}) do
    lines[#lines + 1] = string.format('%-8s %-40s %3d x %8s = %9s', line.productId, line.name, line.quantity,
      text(line.unitPrice), text(money.times(line.unitPrice, line.quantity)))
  end
  local totals = present(state.totals) and state.totals or {}
  vim.list_extend(lines, {
    '',
    string.format('Items: %s', text(totals.itemCount)),
    string.format('Subtotal: %s', text(totals.subtotal)),
    string.format('Tax: %s', text(totals.tax)),
    string.format('Total: %s', text(totals.total)),
    string.format('Checkout: %s', text(state.checkoutPhase)),
  })
  if present(state.lastOrder) then
    lines[#lines + 1] = string.format('Last order: %s (%s items, total %s)', state.lastOrder.id,
      text(state.lastOrder.itemCount), text(state.lastOrder.total))
  end
  return lines
end

local function section(lines, title, sec, row)
  if not present(sec) then
    return
  end
  lines[#lines + 1] = string.format('%s [%s]', title, text(sec.phase))
  error_lines(lines, sec.error, '  ')
  for _, item in ipairs(sec.items or {}) do
    lines[#lines + 1] = '  ' .. row(item)
  end
  lines[#lines + 1] = ''
end

function M.dashboard(state)
  local lines = { 'Dashboard', '' }
  section(lines, 'Featured', state.featured, M.product_row)
  section(lines, 'Categories', state.categories, function(c)
    return string.format('%-24s %d', c.name, c.productCount or 0)
  end)
  section(lines, 'Recent orders', state.recentOrders, function(o)
    return string.format('%s  %s items  total %s  %s', o.id, text(o.itemCount), text(o.total), text(o.createdAt))
  end)
  section(lines, 'Recommended', state.recommended, M.product_row)
  return lines
end

function M.render(type_name, state)
  local renderer = M[type_name]
  if not renderer or type(state) ~= 'table' then
    return vim.split(vim.inspect(state), '\n', true)
  end
  return renderer(state)
end

return M
