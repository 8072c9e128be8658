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

local function error_lines(lines, err, label, retry)
  if present(err) and type(err) == 'table' then
    lines[#lines + 1] = string.format('! %s%s%s%s', label or '', text(err.message), err.retryable and ' (retryable)' or '',
      retry and ('   ' .. retry) or '')
  end
end

--- The state's error, with the key that retries when its load failed or trying again may help.
local function problem_lines(lines, state, retry)
  local err = state.error
  local offer = state.phase == 'failed' or (type(err) == 'table' and err.retryable)
  error_lines(lines, err, nil, offer and retry or nil)
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
    string.format('%d of %d products%s   <CR> open  a add to cart  / search  R refresh', #(state.products or {}),
      state.totalCount or 0, (state.hasMore and state.loadMorePhase == 'idle') and ' (more: L)' or ''),
  }
  problem_lines(lines, state, 'R retry')
  -- Appending a page has its own phase: a failed page leaves the list loaded, and L (loadMore) retries.
  if state.loadMorePhase == 'loading' then
    lines[#lines + 1] = 'Loading more...'
  elseif state.loadMorePhase == 'failed' then
    local err = present(state.loadMoreError) and state.loadMoreError or { message = 'the next page failed to load' }
    error_lines(lines, err, 'more: ', 'L retry')
  end
  lines[#lines + 1] = ''
  for _, product in ipairs(state.products or {}) do
    lines[#lines + 1] = M.product_row(product)
  end
  return lines
end

function M.productDetail(state)
  local lines = { string.format('Product  [%s]   a add to cart  + / - quantity  f favourite  R refresh', text(state.phase)) }
  problem_lines(lines, state, 'R retry')
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
      text(state.totalPrice), state.isFavorite == true and '   * favourite' or '', state.isOutOfStock and '   (out of stock)' or '')
    -- inCart: units already in the cart (maxQuantity is what may still be added); null when unknown.
    lines[#lines + 1] = 'In your cart: ' .. text(state.inCart, 'unknown')
    if not present(state.isFavorite) then
      -- A later success (an add) clears error while the mark stays unknown: offer the retry here too.
      lines[#lines + 1] = 'Favourite: unknown (cannot change now)' .. (present(state.error) and '' or '   R retry')
    elseif state.canToggleFavorite == false then
      lines[#lines + 1] = 'Favourite: cannot change now'
    end
    if state.isAddingToCart then
      lines[#lines + 1] = 'Adding to cart...'
    elseif state.didAddToCart then
      lines[#lines + 1] = 'Added to cart.'
    end
  end
  return lines
end

function M.cart(state)
  local lines = { string.format('Cart  [%s]   x remove line  C checkout  R refresh', text(state.phase)) }
  problem_lines(lines, state, 'R retry')
  error_lines(lines, state.checkoutError, 'checkout: ')
  -- Lines that went without the user removing them (a deleted product), until the next change.
  for _, notice in ipairs(present(state.notices) and state.notices or {}) do
    lines[#lines + 1] = 'Notice: ' .. text(notice.message) .. '   d dismiss'
  end
  lines[#lines + 1] = ''
  if state.phase == 'failed' and #(state.lines or {}) == 0 then
    -- A cart that failed to load holds no lines and zero totals: that says nothing about the real cart.
    lines[#lines + 1] = "(the cart's lines are unknown)"
    return lines
  end
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
  error_lines(lines, sec.error, '  ', sec.phase == 'failed' and 'R reload' or nil)
  for _, item in ipairs(sec.items or {}) do
    lines[#lines + 1] = '  ' .. row(item)
  end
  lines[#lines + 1] = ''
end

function M.dashboard(state)
  local lines = { 'Dashboard   R reload', '' }
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

--- The inbox, newest first: `*` marks an unread notification; the id comes second so `r` can read it back.
function M.notifications(state)
  local lines = {
    string.format('Inbox  [%s]  %d unread%s   r mark read  A mark all read  L more  R refresh', text(state.phase),
      tonumber(state.unreadCount) or 0, state.enabled == false and '  (notifications are off in your profile)' or ''),
  }
  problem_lines(lines, state, 'R retry')
  lines[#lines + 1] = ''
  local items = present(state.items) and state.items or {}
  if #items == 0 and state.phase == 'loaded' then
    lines[#lines + 1] = '(no notifications)'
  end
  for _, item in ipairs(items) do
    lines[#lines + 1] = string.format('%s %s  %s  %s: %s', item.isRead and ' ' or '*', text(item.id), text(item.createdAt),
      text(item.title), text(item.body))
  end
  if state.loadMorePhase == 'failed' then
    local err = present(state.loadMoreError) and state.loadMoreError or { message = 'the next page failed to load' }
    error_lines(lines, err, 'more: ', 'L retry')
  elseif state.hasMore then
    lines[#lines + 1] = '... older ones: L'
  end
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
