-- One connection to `storefront serve` over vim.lsp.rpc (Content-Length framing), and the
-- ViewModels open on it: their handles, versions and states, kept current from viewModel/changed.
local jsonpatch = require('storefront.jsonpatch')

local Client = {}
Client.__index = Client

local function rpc_start(cmd, args, dispatchers)
  if vim.fn.has('nvim-0.10') == 1 then
    local command = { cmd }
    vim.list_extend(command, args)
    return vim.lsp.rpc.start(command, dispatchers)
  end
  return vim.lsp.rpc.start(cmd, args, dispatchers)
end

--- Formats a JSON-RPC error object for people.
function Client.format_error(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local text = string.format('%s (%s)', err.message or 'error', tostring(err.code))
  local data = type(err.data) == 'table' and err.data or {}
  if data.reason and data.reason ~= vim.NIL then
    text = text .. ': ' .. tostring(data.reason)
  end
  if type(data.details) == 'table' then
    local parts = {}
    for key, value in pairs(data.details) do
      parts[#parts + 1] = key .. '=' .. tostring(value)
    end
    table.sort(parts)
    text = text .. ' (' .. table.concat(parts, ', ') .. ')'
  elseif type(data.details) == 'string' then
    text = text .. ' (' .. data.details .. ')'
  end
  if data.parameter then
    text = text .. ' [' .. (data.parameter == '' and 'params' or data.parameter) .. ']'
  end
  return text
end

--- Starts the server and initializes the session.
--- opts: cmd (binary), args (list, after `serve`), on_change(handle, vm), on_error(message), on_exit(code)
function Client.start(opts)
  local self = setmetatable({
    vms = {}, -- handle -> {handle, type, version, state}
    opts = opts,
    exited = false,
    initialized = false,
  }, Client)
  local args = { 'serve', '--framing', 'lsp' }
  vim.list_extend(args, opts.args or {})
  self.rpc = rpc_start(opts.cmd, args, {
    notification = function(method, params)
      if method == 'viewModel/changed' then
        self:_on_changed(params)
      end
    end,
    on_exit = function(code, signal)
      vim.schedule(function()
        self.exited = true
        if opts.on_exit then
          opts.on_exit(code, signal)
        end
      end)
    end,
    on_error = function(code, err)
      self:_error('connection error ' .. tostring(code) .. ': ' .. vim.inspect(err))
    end,
  })
  if not self.rpc then
    return nil, 'could not start ' .. tostring(opts.cmd)
  end
  self:request('initialize', {
    clientInfo = { name = 'storefront.nvim', version = '0.1.0' },
    capabilities = { stateUpdates = 'patch' },
  }, function(err)
    if err then
      self:_error('initialize failed: ' .. Client.format_error(err))
      return
    end
    self.initialized = true
    self.rpc.notify('initialized', vim.empty_dict())
  end)
  return self
end

function Client:_error(message)
  if self.opts.on_error then
    self.opts.on_error(message)
  end
end

--- Sends a request; callback(err, result) runs on the main loop (after the notifications that
--- preceded the response).
function Client:request(method, params, callback)
  if self.exited then
    callback({ message = 'the server is not running', code = 0 })
    return
  end
  local ok = self.rpc.request(method, params, function(err, result)
    callback(err, result)
  end)
  if not ok then
    callback({ message = 'could not send ' .. method, code = 0 })
  end
end

function Client:_on_changed(params)
  local vm = self.vms[params.viewModel]
  if not vm then
    return -- closed meanwhile
  end
  if vm.resyncing then
    return
  end
  if params.version ~= vm.version + 1 then
    self:_resync(vm, string.format('version gap (%d after %d)', params.version, vm.version))
    return
  end
  if params.state ~= nil then
    vm.state = params.state
  else
    local new, err = jsonpatch.apply(vm.state, params.patch or {})
    if new == nil then
      self:_resync(vm, err)
      return
    end
    vm.state = new
  end
  vm.version = params.version
  if self.opts.on_change then
    self.opts.on_change(vm.handle, vm)
  end
end

-- Starts again from viewModel/get after a gap or a patch that did not apply.
function Client:_resync(vm, why)
  vm.resyncing = true
  vm.resyncs = (vm.resyncs or 0) + 1
  self:request('viewModel/get', { viewModel = vm.handle }, function(err, result)
    vm.resyncing = false
    if err then
      self:_error('resync of ' .. vm.type .. ' failed (' .. why .. '): ' .. Client.format_error(err))
      return
    end
    vm.state, vm.version = result.state, result.version
    if self.opts.on_change then
      self.opts.on_change(vm.handle, vm)
    end
  end)
end

--- Opens a ViewModel; callback(err, vm).
function Client:open(type_name, args, callback)
  self:request('viewModel/open', { type = type_name, args = args or vim.empty_dict() }, function(err, result)
    if err then
      return callback(err)
    end
    local vm = { handle = result.viewModel, type = type_name, version = result.version, state = result.state }
    self.vms[vm.handle] = vm
    if self.opts.on_change then
      self.opts.on_change(vm.handle, vm)
    end
    callback(nil, vm)
  end)
end

function Client:close_vm(vm, callback)
  self.vms[vm.handle] = nil
  self:request('viewModel/close', { viewModel = vm.handle }, callback or function() end)
end

--- Runs `<type>/<action>` on a ViewModel; callback(err, result).
function Client:action(vm, action, args, callback)
  local params = vim.deepcopy(args or {})
  params.viewModel = vm.handle
  self:request(vm.type .. '/' .. action, params, callback)
end

--- Ends the session politely (shutdown, exit) and makes sure the process is gone, waiting at most
--- `timeout` ms. Safe to call twice.
function Client:stop(timeout)
  if self.exited or self.stopping then
    return
  end
  self.stopping = true
  timeout = timeout or 1000
  local shut = false
  pcall(self.rpc.request, 'shutdown', nil, function()
    shut = true
  end)
  vim.wait(timeout, function()
    return shut or self.exited
  end, 10)
  pcall(self.rpc.notify, 'exit', nil)
  vim.wait(timeout, function()
    return self.exited
  end, 10)
  if not self.exited then
    if self.rpc.terminate then
      self.rpc.terminate()
    elseif self.rpc.handle then
      pcall(self.rpc.handle.kill, self.rpc.handle, 15)
    end
    vim.wait(timeout, function()
      return self.exited
    end, 10)
  end
end

return Client
