-- The renderer on states a real server shows only under faults it cannot time: a catalog page that failed or
-- is loading, a cart that failed to load. Prints "render: N passed, N failed".
local render = require('storefront.render')
local passed, failed = 0, 0

local function check(what, ok)
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    io.stdout:write('FAIL ', what, '\n')
  end
end

local function has(lines, wanted)
  for _, line in ipairs(lines) do
    if line == wanted then
      return true
    end
  end
  io.stdout:write('  no line ', vim.inspect(wanted), ' in\n  ', table.concat(lines, '\n  '), '\n')
  return false
end

local catalog = {
  phase = 'loaded', query = '', sort = 'name', products = {}, totalCount = 240, hasMore = true, selection = {},
  loadMorePhase = 'failed', loadMoreError = { message = 'The catalog service is unavailable.', retryable = true },
}
local lines = render.catalog(catalog)
check('a failed page shows its error and retry', has(lines, '! more: The catalog service is unavailable. (retryable)   L retry'))
check('the list stays loaded', lines[1]:find('[loaded]', 1, true) ~= nil)
catalog.loadMorePhase, catalog.loadMoreError = 'loading', nil
check('a page loading is shown', has(render.catalog(catalog), 'Loading more...'))
catalog.loadMorePhase = 'idle'
check('an idle catalog with more offers L', has(render.catalog(catalog), '0 of 240 products (more: L)   <CR> open  a add to cart  / search  R refresh'))

local cart = {
  phase = 'failed', error = { message = 'The cart service is unavailable.', retryable = true }, lines = {},
  totals = { itemCount = 0, subtotal = '0.00', tax = '0.00', total = '0.00' }, checkoutPhase = 'idle', notices = {},
}
lines = render.cart(cart)
check('a failed cart offers its retry', has(lines, '! The cart service is unavailable. (retryable)   R retry'))
check('a failed cart does not claim to be empty', has(lines, "(the cart's lines are unknown)"))

io.stdout:write(string.format('render: %d passed, %d failed\n', passed, failed))
vim.cmd(failed == 0 and 'qall!' or 'cquit 1')
