-- Storefront in Neovim: the catalog, a product, the cart and the dashboard as scratch buffers that
-- follow the server's state stream. See clients/nvim/README.md.
local Client = require('storefront.client')
local render = require('storefront.render')

local M = {}

M.config = {
  cmd = nil, -- the storefront binary; found in the repository's .build or on PATH when nil
  args = {}, -- extra `storefront serve` arguments, e.g. { '--database', '/tmp/shop.sqlite' }
  -- where the session token is kept (0600) and resumed from when the server starts; nil: the default,
  -- $STOREFRONT_TOKEN_FILE, else $XDG_DATA_HOME/storefront/token (the shell and Python clients' too)
  token_file = nil,
}

local client -- the running Client, started on first use
local views = {} -- ViewModel type -> { vm = ..., buf = ... }
M.last_error = nil -- the last error shown, for tests and :messages

local function notify_error(message)
  M.last_error = message
  vim.notify('storefront: ' .. message, vim.log.levels.ERROR)
end

local function find_server()
  if M.config.cmd then
    return M.config.cmd
  end
  local from_env = os.getenv('STOREFRONT_BIN')
  if from_env and from_env ~= '' then
    return from_env
  end
  local source = debug.getinfo(1, 'S').source:sub(2)
  local repo = vim.fn.fnamemodify(source, ':p:h:h:h:h:h')
  for _, build in ipairs({ 'release', 'debug' }) do
    local candidate = repo .. '/.build/' .. build .. '/storefront'
    if vim.fn.executable(candidate) == 1 then
      return candidate
    end
  end
  if vim.fn.executable('storefront') == 1 then
    return 'storefront'
  end
  return nil
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', M.config, opts or {})
end

-- ----------------------------------------------------------------------------------------- buffers

local function refresh(type_name)
  local view = views[type_name]
  if not view or not view.buf or not vim.api.nvim_buf_is_valid(view.buf) then
    return
  end
  local lines = render.render(type_name, view.vm.state)
  vim.api.nvim_buf_set_option(view.buf, 'modifiable', true)
  vim.api.nvim_buf_set_lines(view.buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(view.buf, 'modifiable', false)
  vim.api.nvim_buf_set_option(view.buf, 'modified', false)
end

local function map(buf, lhs, rhs, desc)
  vim.api.nvim_buf_set_keymap(buf, 'n', lhs, '', { noremap = true, silent = true, callback = rhs, desc = desc })
end

local function buffer_for(type_name)
  local view = views[type_name]
  if view.buf and vim.api.nvim_buf_is_valid(view.buf) then
    return view.buf
  end
  local name = 'storefront://' .. type_name
  local existing = vim.fn.bufnr(name)
  local buf = existing ~= -1 and existing or vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.api.nvim_buf_set_option(buf, 'buftype', 'nofile')
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(buf, 'swapfile', false)
  vim.api.nvim_buf_set_option(buf, 'filetype', 'storefront')
  map(buf, 'R', function() M.refresh() end, 'load again (the retry after a failure)')
  if type_name == 'catalog' then
    map(buf, '<CR>', function() M.open_product() end, 'open the product under the cursor')
    map(buf, 'a', function() M.add_to_cart() end, 'add the product under the cursor to the cart')
    map(buf, '/', function()
      local query = vim.fn.input('Search: ')
      M.search(query)
    end, 'search')
    map(buf, 'L', function() M.action('catalog', 'loadMore') end, 'load more')
  elseif type_name == 'productDetail' then
    map(buf, 'a', function() M.add_to_cart() end, 'add to cart')
    map(buf, '+', function() M.action('productDetail', 'incrementQuantity') end, 'one more')
    map(buf, '-', function() M.action('productDetail', 'decrementQuantity') end, 'one less')
    map(buf, 'f', function() M.toggle_favorite() end, 'favourite')
  elseif type_name == 'cart' then
    map(buf, 'x', function()
      local id = M.product_id_at_cursor()
      if id then
        M.action('cart', 'remove', { productId = id })
      end
    end, 'remove the line')
    map(buf, 'C', function() M.checkout() end, 'checkout')
    map(buf, 'd', function() M.dismiss_notices() end, 'dismiss the notices')
  elseif type_name == 'notifications' then
    map(buf, 'r', function() M.mark_read() end, 'mark the notification under the cursor read')
    map(buf, 'A', function() M.mark_all_read() end, 'mark every notification read')
    map(buf, 'L', function() M.action('notifications', 'loadMore') end, 'load older notifications')
  end
  view.buf = buf
  return buf
end

local function show(type_name)
  local buf = buffer_for(type_name)
  if vim.api.nvim_get_current_buf() ~= buf then
    vim.api.nvim_set_current_buf(buf)
  end
  refresh(type_name)
end

-- ---------------------------------------------------------------------------------------- the server

-- Failures that arrive in the state (a load that failed, a checkout that failed) are shown once.
local function report_failures(vm)
  local state = vm.state or {}
  for _, key in ipairs({ 'phase', 'checkoutPhase', 'submitPhase' }) do
    local phase = state[key]
    local seen = vm.seen or {}
    if phase == 'failed' and seen[key] ~= 'failed' then
      local err = key == 'checkoutPhase' and state.checkoutError or state.error
      local message = type(err) == 'table' and err.message or 'failed'
      notify_error(vm.type .. ': ' .. tostring(message) .. (key == 'phase' and ' (R to retry)' or ''))
    end
    seen[key] = phase
    vm.seen = seen
  end
end

local function on_change(_, vm)
  report_failures(vm)
  local view = views[vm.type]
  if view and view.vm == vm then
    refresh(vm.type)
  end
end

function M.client()
  if client and not client.exited then
    return client
  end
  local cmd = find_server()
  if not cmd then
    notify_error('no storefront binary: run `swift build --product storefront`, or setup({ cmd = ... })')
    return nil
  end
  views = {}
  local err
  client, err = Client.start({
    cmd = cmd,
    args = M.config.args,
    on_change = on_change,
    on_error = notify_error,
    on_exit = function(code)
      if client and not client.stopping then
        notify_error('the server exited (code ' .. tostring(code) .. '); its stderr is in ' .. vim.lsp.get_log_path())
      end
    end,
  })
  if not client then
    notify_error(err)
    return nil
  end
  M.resume()
  return client
end

--- Opens a ViewModel of `type_name` unless one is open, then calls `then_(vm)`.
local function with_vm(type_name, args, then_)
  local c = M.client()
  if not c then
    return
  end
  local view = views[type_name]
  if view and view.vm and c.vms[view.vm.handle] then
    if then_ then
      then_(view.vm)
    end
    return
  end
  c:open(type_name, args, function(err, vm)
    if err then
      return notify_error('could not open ' .. type_name .. ': ' .. Client.format_error(err))
    end
    views[type_name] = { vm = vm, buf = views[type_name] and views[type_name].buf }
    refresh(type_name)
    if then_ then
      then_(vm)
    end
  end)
end

--- Runs an action on the open ViewModel of `type_name`; errors are shown. callback(result) on success.
function M.action(type_name, action, args, callback)
  local view = views[type_name]
  if not view or not view.vm then
    return notify_error('no ' .. type_name .. ' is open')
  end
  client:action(view.vm, action, args, function(err, result)
    if err then
      return notify_error(type_name .. '/' .. action .. ': ' .. Client.format_error(err))
    end
    if callback then
      callback(result)
    end
  end)
end

-- ------------------------------------------------------------------------------------------ commands

function M.catalog()
  with_vm('catalog', nil, function()
    show('catalog')
  end)
end

function M.search(query)
  with_vm('catalog', nil, function()
    show('catalog')
    M.action('catalog', 'search', { query = query or '' })
  end)
end

--- The product id on the cursor's line of a catalog, cart or dashboard buffer.
function M.product_id_at_cursor()
  local line = vim.api.nvim_get_current_line()
  return line:match('^%s*(p%-%d+)%s')
end

function M.open_product(product_id)
  product_id = (product_id ~= nil and product_id ~= '') and product_id or M.product_id_at_cursor()
  if not product_id then
    return notify_error('which product? :StorefrontOpen {productId}, or <CR> on a catalog line')
  end
  local c = M.client()
  if not c then
    return
  end
  local old = views.productDetail and views.productDetail.vm
  c:open('productDetail', { productId = product_id }, function(err, vm)
    if err then
      return notify_error('could not open ' .. product_id .. ': ' .. Client.format_error(err))
    end
    if old and c.vms[old.handle] then
      c:close_vm(old) -- one product screen at a time
    end
    views.productDetail = { vm = vm, buf = views.productDetail and views.productDetail.buf }
    show('productDetail')
  end)
end

--- In a catalog (or dashboard) buffer: adds the product under the cursor; elsewhere: the open product.
function M.add_to_cart(quantity)
  local buf_name = vim.api.nvim_buf_get_name(0)
  local id = M.product_id_at_cursor()
  if id and not buf_name:match('storefront://productDetail$') then
    with_vm('cart', nil, function()
      M.action('cart', 'add', { productId = id, quantity = tonumber(quantity) or 1 }, function()
        vim.notify('storefront: added ' .. id .. ' to the cart')
      end)
    end)
    return
  end
  if not (views.productDetail and views.productDetail.vm) then
    return notify_error('no product is open: :StorefrontOpen {productId}')
  end
  with_vm('cart', nil, function() -- an open cart follows the addition
    M.action('productDetail', 'addToCart', nil, function()
      vim.notify('storefront: added to the cart')
    end)
  end)
end

function M.cart()
  with_vm('cart', nil, function()
    show('cart')
  end)
end

function M.checkout()
  with_vm('cart', nil, function()
    M.action('cart', 'checkout', nil, function(result)
      vim.notify('storefront: order ' .. tostring(result.orderId) .. ' placed')
    end)
  end)
end

function M.dashboard()
  with_vm('dashboard', nil, function()
    show('dashboard')
  end)
end

--- The action that loads each type again: the retry after a failed load.
local reload_action = {
  catalog = 'refresh',
  productDetail = 'refresh',
  productForm = 'refresh',
  cart = 'refresh',
  dashboard = 'reload',
  notifications = 'refresh',
}

--- Loads the current buffer's ViewModel again (`type_name` overrides the buffer): a retry.
function M.refresh(type_name)
  type_name = (type_name ~= nil and type_name ~= '') and type_name
    or vim.api.nvim_buf_get_name(0):match('storefront://(%w+)$')
  local action = reload_action[type_name or '']
  if not action then
    return notify_error('nothing to refresh here: use it in a storefront buffer, or :StorefrontRefresh {type}')
  end
  M.action(type_name, action)
end

--- Toggles the open product's favourite mark, unless the state says it cannot change (its mark unknown).
function M.toggle_favorite()
  local state = M.state('productDetail')
  if state and state.canToggleFavorite == false then
    local err = type(state.error) == 'table' and state.error.message
    return notify_error('the favourite cannot change now' .. (err and (': ' .. tostring(err)) or ''))
  end
  M.action('productDetail', 'toggleFavorite')
end

--- Forgets the cart's notices (lines that went because their product was deleted).
function M.dismiss_notices()
  with_vm('cart', nil, function()
    M.action('cart', 'dismissNotices')
  end)
end

-- --------------------------------------------------------------------------------------------- inbox
-- The signed-in account's notifications (orders placed, favourites back in stock or cheaper), newest first,
-- arriving live from any server on the database. A guest has none (`signInRequired`).

function M.inbox()
  with_vm('notifications', nil, function()
    show('notifications')
  end)
end

--- The notification id on the cursor's line of the inbox buffer.
function M.notification_id_at_cursor()
  return vim.api.nvim_get_current_line():match('^[%* ] (n%-%d+)%s')
end

--- Marks a notification read: `id`, else the one under the cursor.
function M.mark_read(id)
  id = (id ~= nil and id ~= '') and id or M.notification_id_at_cursor()
  if not id then
    return notify_error('which notification? :StorefrontMarkRead {id}, or r on an inbox line')
  end
  with_vm('notifications', nil, function()
    M.action('notifications', 'markAsRead', { id = id })
  end)
end

function M.mark_all_read()
  with_vm('notifications', nil, function()
    M.action('notifications', 'markAllRead')
  end)
end

-- ------------------------------------------------------------------------------------------ accounts
-- Each server is a session, a guest until it signs in. A sign-in answers a token, kept in the token file
-- (0600, the token alone) and resumed when the server starts, so a restarted server needs no password.

function M.token_file()
  if M.config.token_file then
    return M.config.token_file
  end
  local explicit = os.getenv('STOREFRONT_TOKEN_FILE')
  if explicit and explicit ~= '' then
    return explicit
  end
  local data = os.getenv('XDG_DATA_HOME')
  if not data or data == '' then
    data = (os.getenv('HOME') or '.') .. '/.local/share'
  end
  return data .. '/storefront/token'
end

local function read_token()
  local file = io.open(M.token_file(), 'r')
  if not file then
    return nil
  end
  local token = file:read('*l')
  file:close()
  return token ~= '' and token or nil
end

--- Writes the token to a new 0600 file beside the token file, then renames it over the old one.
local function keep_token(token)
  local path = M.token_file()
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p', 448) -- 0700
  local tmp = path .. '.' .. tostring(vim.loop.os_getpid()) .. '.tmp'
  local fd = vim.loop.fs_open(tmp, 'w', 384) -- 0600
  if not fd then
    return notify_error('could not keep the session token in ' .. path)
  end
  vim.loop.fs_write(fd, token .. '\n', -1)
  vim.loop.fs_fsync(fd)
  vim.loop.fs_close(fd)
  vim.loop.fs_chmod(tmp, 384)
  vim.loop.fs_rename(tmp, path)
end

local function forget_token()
  os.remove(M.token_file())
end

--- Who this session is, as a line: "signed in as EMAIL (NAME)" or "a guest".
function M.whoami()
  local state = M.state('login')
  if state and type(state.user) == 'table' then
    return 'signed in as ' .. tostring(state.user.email) .. ' (' .. tostring(state.user.name) .. ')'
  end
  return 'a guest'
end

local function signed_in(result)
  if result and result.token then
    keep_token(result.token)
  end
  local state = M.state('login') or {}
  for _, line in ipairs(type(state.cappedLines) == 'table' and state.cappedLines or {}) do
    vim.notify(string.format('storefront: %s: your cart keeps %d, not %d', line.name, line.kept, line.requested))
  end
  vim.notify('storefront: ' .. M.whoami())
end

--- Resumes the kept session (called when the server starts); a token the server refuses is forgotten.
function M.resume(callback)
  local token = read_token()
  if not token then
    return callback and callback(false)
  end
  with_vm('login', nil, function(vm)
    client:action(vm, 'resume', { token = token }, function(err)
      if err then
        local reason = type(err.data) == 'table' and err.data.reason
        if reason == 'sessionInvalid' then
          forget_token()
          vim.notify('storefront: the kept session has ended; signed out')
        else
          notify_error('login/resume: ' .. Client.format_error(err))
        end
      end
      if callback then
        callback(not err)
      end
    end)
  end)
end

--- Signs in (`password` nil: asked with echo off).
function M.login(email, password, callback)
  password = password or vim.fn.inputsecret('Password: ')
  with_vm('login', nil, function()
    M.action('login', 'login', { email = email, password = password }, function(result)
      signed_in(result)
      if callback then
        callback(result)
      end
    end)
  end)
end

--- Creates an account and signs in (`password` nil: asked twice with echo off).
function M.register(email, password, callback)
  if not password then
    password = vim.fn.inputsecret('Password: ')
    if vim.fn.inputsecret('Password again: ') ~= password then
      return notify_error('the passwords differ')
    end
  end
  with_vm('registration', nil, function()
    M.action('registration', 'setField', { field = 'email', value = email }, function()
      M.action('registration', 'setField', { field = 'password', value = password }, function()
        M.action('registration', 'setField', { field = 'confirmPassword', value = password }, function()
          M.action('registration', 'setAcceptedTerms', { accepted = true }, function()
            M.action('registration', 'register', nil, function(result)
              with_vm('login', nil, function()
                signed_in(result)
                if callback then
                  callback(result)
                end
              end)
            end)
          end)
        end)
      end)
    end)
  end)
end

--- Signs out: the token stops working in every server; this session becomes a guest.
function M.logout(callback)
  with_vm('login', nil, function()
    M.action('login', 'logout', nil, function()
      forget_token()
      vim.notify('storefront: signed out')
      if callback then
        callback()
      end
    end)
  end)
end

--- The state of the open ViewModel of `type_name` (tests, scripting).
function M.state(type_name)
  local view = views[type_name]
  return view and view.vm and view.vm.state
end

--- How many times the open ViewModel of `type_name` started again from viewModel/get (a gap, or a patch
--- that did not apply).
function M.resyncs(type_name)
  local view = views[type_name]
  return view and view.vm and view.vm.resyncs or 0
end

--- The version of the open ViewModel of `type_name` (tests, scripting).
function M.version(type_name)
  local view = views[type_name]
  return view and view.vm and view.vm.version
end

--- The server's process id, when the Neovim version exposes it.
function M.server_pid()
  return client and client.rpc and client.rpc.pid
end

function M.stop()
  if client then
    client:stop(1000)
    client = nil
  end
  views = {}
end

return M
