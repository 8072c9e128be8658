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

local inbox = {
  phase = 'loaded', unreadCount = 1, hasMore = true, loadMorePhase = 'idle', enabled = true,
  items = {
    { id = 'n-7', kind = 'priceDropped', title = 'Price drop', body = 'Lamp is now 9.99', createdAt = '2026-11-22T20:00:00Z', isRead = false },
    { id = 'n-3', kind = 'orderPlaced', title = 'Order placed', body = 'o-000001', createdAt = '2026-11-22T19:00:00Z', isRead = true },
  },
}
lines = render.notifications(inbox)
check('the inbox says how many are unread', lines[1]:find('^Inbox  %[loaded%]  1 unread') ~= nil)
check('an unread notification is marked', has(lines, '* n-7  2026-11-22T20:00:00Z  Price drop: Lamp is now 9.99'))
check('a read one is not', has(lines, '  n-3  2026-11-22T19:00:00Z  Order placed: o-000001'))
check('older ones are offered', has(lines, '... older ones: L'))
inbox.enabled, inbox.items, inbox.hasMore, inbox.unreadCount = false, {}, false, 0
lines = render.notifications(inbox)
check('an empty inbox says so', has(lines, '(no notifications)'))
check('notifications turned off are named', lines[1]:find('notifications are off', 1, true) ~= nil)

io.stdout:write(string.format('render: %d passed, %d failed\n', passed, failed))
vim.cmd(failed == 0 and 'qall!' or 'cquit 1')
