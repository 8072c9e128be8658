-- Starts the server, writes its pid to $STOREFRONT_PID_FILE, then quits (VimLeavePre must stop it) or,
-- with $STOREFRONT_HANG set, waits to be killed.
local sf = require('storefront')
sf.setup({ args = { '--database', (assert(os.getenv('STOREFRONT_TEST_DB'))) } })
vim.cmd('StorefrontCart')
assert(vim.wait(60000, function()
  local state = sf.state('cart')
  return state and state.phase == 'loaded'
end, 20), 'the cart did not load')
local file = assert(io.open(assert(os.getenv('STOREFRONT_PID_FILE')), 'w'))
file:write(tostring(sf.server_pid()), '\n')
file:close()
if os.getenv('STOREFRONT_HANG') then
  vim.wait(600000, function() return false end, 100)
end
vim.cmd('qall!')
