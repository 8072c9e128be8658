-- End-to-end test of the plugin against a real `storefront serve` (database from $STOREFRONT_TEST_DB):
-- drives the user commands, waits on conditions with vim.wait, and asserts on buffer lines.
-- Exits with :cquit on the first failure; prints "N passed, N failed" at the end.
local function say(text)
  io.stdout:write(text, "\n")
end
vim.notify = function(message)
  say('  notify: ' .. tostring(message))
end
local sf = require('storefront')
sf.setup({ args = { '--database', (assert(os.getenv('STOREFRONT_TEST_DB'), 'set STOREFRONT_TEST_DB')) } })
local passed = 0

local function finish(failed_message)
  if failed_message then
    say('FAIL ' .. failed_message)
    say(string.format('nvim: %d passed, 1 failed', passed))
    pcall(sf.stop)
    vim.cmd('cquit 1')
  end
  say(string.format('nvim: %d passed, 0 failed', passed))
end

local function buffer_lines(name)
  local buf = vim.fn.bufnr('storefront://' .. name)
  if buf == -1 then
    return {}
  end
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function has_line(name, pattern)
  for _, line in ipairs(buffer_lines(name)) do
    if line:find(pattern) then
      return true
    end
  end
  return false
end

--- Waits until `condition()` holds; fails the test with `what` otherwise. The 60 s bound is a guard
--- against a stuck plugin or server, not a measure of speed: the wait ends as soon as the condition holds.
local function expect(what, condition)
  if vim.wait(60000, condition, 20) then
    passed = passed + 1
    say('ok   ' .. what)
  else
    local shown = {}
    for _, name in ipairs({ 'catalog', 'productDetail', 'cart', 'dashboard', 'notifications' }) do
      shown[#shown + 1] = name .. ':\n  ' .. table.concat(buffer_lines(name), '\n  ')
    end
    finish(what .. '\nlast error: ' .. tostring(sf.last_error) .. '\n' .. table.concat(shown, '\n'))
  end
end

local ok, err = pcall(function()
  vim.cmd('StorefrontCatalog')
  expect('the catalog buffer lists products', function()
    return vim.api.nvim_buf_get_name(0):match('storefront://catalog$') and has_line('catalog', '^p%-%d+ ')
  end)
  expect('it says how many', function()
    return has_line('catalog', '^20 of 240 products')
  end)

  vim.cmd('StorefrontSearch kettle')
  expect('a search narrows the list', function()
    return has_line('catalog', '^4 of 4 products') and has_line('catalog', 'Everyday Steel Kettle')
      and not has_line('catalog', 'Cutting Board')
  end)

  vim.cmd('StorefrontCart')
  expect('an empty cart shows a zero total', function()
    return has_line('cart', '^%(empty%)$') and has_line('cart', '^Total: 0%.00$')
  end)

  -- <CR>-style opening: the product under the cursor of the catalog.
  vim.cmd('StorefrontCatalog')
  vim.fn.search('Everyday Steel Kettle')
  vim.cmd('StorefrontOpen')
  expect('the product under the cursor opens', function()
    return has_line('productDetail', '^p%-0112  Everyday Steel Kettle$') and has_line('productDetail', 'Total: 19%.99')
  end)

  vim.cmd('StorefrontOpen p-0003')
  expect('a product opens by id', function()
    return has_line('productDetail', '^p%-0003  Smart Linen Keyboard$')
  end)
  vim.cmd('normal +')
  expect('+ raises the quantity and its total', function()
    return has_line('productDetail', '^Quantity: 2 of 5   Total: 571%.98')
  end)
  expect('the product says how many are in the cart', function()
    return has_line('productDetail', '^In your cart: 0$')
  end)
  vim.cmd('StorefrontAddToCart')
  expect('adding from the product updates the open cart from patches', function()
    return has_line('cart', '^p%-0003 +Smart Linen Keyboard +2 x +285%.99 = +571%.98$') and has_line('cart', '^Total: 680%.66$')
  end)
  expect('the product counts the units now in the cart, and offers the rest', function()
    return has_line('productDetail', '^In your cart: 2$') and has_line('productDetail', '^Quantity: %d+ of 3 ')
  end)
  local cart = sf.state('cart')
  expect('the patched state matches viewModel/get', function()
    local fresh
    require('storefront').client():request('viewModel/get', { viewModel = 'v2' }, function(e, r)
      fresh = e and {} or r.state
    end)
    vim.wait(5000, function()
      return fresh ~= nil
    end, 10)
    return fresh and vim.deep_equal(fresh.totals, cart.totals) and vim.deep_equal(fresh.lines, cart.lines)
  end)

  -- From the catalog, `a` on a line adds one of that product.
  vim.cmd('StorefrontCatalog')
  vim.fn.search('Everyday Steel Kettle')
  vim.cmd('StorefrontAddToCart')
  expect('adding from a catalog line updates the total', function()
    return has_line('cart', '^p%-0112 ') and has_line('cart', '^Items: 3$') and has_line('cart', '^Total: 704%.45$')
  end)

  sf.action('cart', 'setQuantity', { productId = 'p-0003', quantity = 100000 })
  expect('a refused action is shown with its reason', function()
    return sf.last_error and sf.last_error:find('cart/setQuantity') and sf.last_error:find('quantityExceeds')
  end)
  sf.last_error = nil
  vim.cmd('StorefrontOpen p-9999')
  expect('a product that fails to load is reported', function()
    return sf.last_error and sf.last_error:find('p%-9999 does not exist') and has_line('productDetail', '^! Product p%-9999')
  end)
  expect('a failed product offers its retry', function()
    return has_line('productDetail', '^! Product p%-9999 does not exist%.   R retry$')
  end)
  local failed_at = sf.version('productDetail')
  vim.cmd('normal R')
  expect('R retries the load, which fails again', function()
    return sf.version('productDetail') > failed_at and sf.state('productDetail').phase == 'failed'
      and has_line('productDetail', '^Product  %[failed%]') and has_line('productDetail', 'R retry$')
  end)
  expect('patches that set null (the error cleared while retrying) apply without a resync', function()
    return sf.resyncs('productDetail') == 0
  end)

  -- Guests may not check out: sign up (the guest's cart moves into the account), then check out.
  sf.register('nvim@example.com', 'nvim password 1')
  expect('signing up signs in and keeps the cart', function()
    return sf.whoami() == 'signed in as nvim@example.com (nvim)' and has_line('cart', '^p%-0003 +Smart Linen Keyboard')
  end)
  expect('the token is kept 0600', function()
    local stat = vim.loop.fs_stat(sf.token_file())
    return stat and stat.mode % 512 == 384
  end)
  vim.cmd('StorefrontCheckout')
  expect('checkout empties the cart and names the order', function()
    return has_line('cart', '^Total: 0%.00$') and has_line('cart', '^Last order: o%-000001 %(3 items, total 704%.45%)$')
  end)
  vim.cmd('StorefrontDashboard')
  expect('the dashboard lists the order', function()
    return has_line('dashboard', '^Recent orders %[loaded%]$') and has_line('dashboard', '^  o%-000001  3 items  total 704%.45')
  end)

  -- The inbox: the order placed is there, unread; a second order arrives live; r marks one read, A all.
  vim.cmd('StorefrontInbox')
  expect('the inbox lists the order placed, unread', function()
    return has_line('notifications', '^Inbox  %[loaded%]  1 unread') and has_line('notifications', '^%* n%-%d+  ')
  end)
  local ordered = false
  sf.action('cart', 'add', { productId = 'p-0001', quantity = 1 }, function()
    sf.action('cart', 'checkout', nil, function()
      ordered = true
    end)
  end)
  expect('a second order arrives in the open inbox', function()
    return ordered and has_line('notifications', '^Inbox  %[loaded%]  2 unread')
  end)
  vim.cmd('StorefrontInbox')
  vim.fn.cursor(1, 1)
  vim.fn.search('^\\* n-')
  local marked = sf.notification_id_at_cursor()
  vim.cmd('normal r')
  expect('r marks the notification under the cursor read', function()
    return marked and has_line('notifications', '^Inbox  %[loaded%]  1 unread')
      and has_line('notifications', '^  ' .. marked:gsub('%-', '%%-') .. '  ')
  end)
  vim.cmd('StorefrontMarkAllRead')
  expect(':StorefrontMarkAllRead marks the rest', function()
    return has_line('notifications', '^Inbox  %[loaded%]  0 unread') and not has_line('notifications', '^%* ')
  end)

  -- A product deleted from a catalog leaves the cart with a notice, until dismissed. The catalog still
  -- lists the kettles of the search above.
  local deleted = false
  sf.action('cart', 'add', { productId = 'p-0112', quantity = 1 }, function()
    sf.action('catalog', 'toggleSelection', { productId = 'p-0112' }, function()
      sf.action('catalog', 'deleteSelected', nil, function()
        deleted = true
      end)
    end)
  end)
  vim.cmd('StorefrontCart')
  expect('the cart names a line whose product was deleted', function()
    return deleted and has_line('cart', '^Notice: Everyday Steel Kettle was removed from your cart: it is no longer sold%.   d dismiss$')
      and has_line('cart', '^%(empty%)$')
  end)
  vim.cmd('normal d')
  expect('d dismisses the notice', function()
    return #sf.state('cart').notices == 0 and not has_line('cart', '^Notice:') and has_line('cart', '^%(empty%)$')
  end)

  local pid = sf.server_pid()
  vim.cmd('StorefrontStop')
  expect('stopping ends the server', function()
    return pid == nil or vim.loop.kill(pid, 0) ~= 0
  end)

  -- A favourites outage (the server's --faults): the product shows, its favourite unknown and fixed.
  sf.config.args = { '--database', os.getenv('STOREFRONT_TEST_DB'), '--faults', 'favorites:failure-rate=1' }
  vim.cmd('StorefrontOpen p-0003')
  expect('a new server resumes the kept session', function()
    return sf.whoami() == 'signed in as nvim@example.com (nvim)'
  end)
  expect('a favourites outage still shows the product, its favourite unknown', function()
    return has_line('productDetail', '^p%-0003  Smart Linen Keyboard$')
      and has_line('productDetail', '^Favourite: unknown %(cannot change now%)$')
      and has_line('productDetail', '^! The favorites service is unavailable%. Please try again%. %(retryable%)   R retry$')
  end)
  sf.last_error = nil
  local before = sf.version('productDetail')
  vim.cmd('normal f')
  expect('f does not toggle an unknown favourite, and says why', function()
    return sf.last_error and sf.last_error:find('^the favourite cannot change now: The favorites service is unavailable')
      and sf.version('productDetail') == before
  end)
  vim.cmd('StorefrontRefresh')
  expect(':StorefrontRefresh retries, and the favourite stays unknown', function()
    return sf.version('productDetail') > before and sf.state('productDetail').phase == 'loaded'
      and has_line('productDetail', '^Favourite: unknown')
  end)
  vim.cmd('StorefrontAddToCart')
  expect('an add keeps why the favourite is unknown; it stays unknown, with its retry', function()
    return has_line('productDetail', '^In your cart: 1$') and has_line('productDetail', '^! .*favorites service.*R retry$')
      and has_line('productDetail', '^Favourite: unknown %(cannot change now%)')
  end)

  vim.cmd('StorefrontCatalog')
  expect('the catalog loads its first page', function()
    return has_line('catalog', '^20 of 239 products %(more: L%)')
  end)
  vim.cmd('normal L')
  expect('L appends a page', function()
    return has_line('catalog', '^40 of 239 products %(more: L%)')
  end)
  vim.cmd('StorefrontLogout')
  expect('signing out forgets the token and leaves a guest', function()
    return sf.whoami() == 'a guest' and vim.loop.fs_stat(sf.token_file()) == nil
  end)
  vim.cmd('StorefrontStop')
end)
if not ok then
  finish('error: ' .. tostring(err))
end
finish()
vim.cmd('qall!')
