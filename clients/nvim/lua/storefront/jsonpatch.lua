-- RFC 6902 JSON Patch on decoded JSON (Lua tables), RFC 6901 pointers.
--
-- Arrays are Lua sequences (index 0 on the wire is [1] here); objects are tables with string keys.
-- JSON null is vim.NIL, or an absent key when the decoder drops nulls in objects (vim.lsp.rpc does).
-- `apply` works on a deep copy and returns the new document, or nil and an error message: a patch
-- applies whole or not at all.
local M = {}

local function is_array(value, hint)
  if type(value) ~= 'table' then
    return false
  end
  if hint ~= nil then
    return hint
  end
  if getmetatable(value) == getmetatable(vim.empty_dict()) and next(value) == nil then
    return false
  end
  local n = #value
  if n == 0 then
    return next(value) == nil -- an empty table: an empty array unless marked as a dict
  end
  return next(value, n) == nil
end
M.is_array = is_array

--- Splits a JSON pointer into unescaped tokens; nil and a message for an invalid pointer.
function M.tokens(pointer)
  if pointer == '' then
    return {}
  end
  if type(pointer) ~= 'string' or pointer:sub(1, 1) ~= '/' then
    return nil, 'invalid pointer ' .. vim.inspect(pointer)
  end
  local tokens = {}
  for token in (pointer:sub(2) .. '/'):gmatch('([^/]*)/') do
    tokens[#tokens + 1] = token:gsub('~1', '/'):gsub('~0', '~')
  end
  return tokens
end

local function array_index(token, length, allow_end)
  if token == '-' and allow_end then
    return length + 1
  end
  if not token:match('^0$') and not token:match('^[1-9]%d*$') then
    return nil, 'bad array index ' .. token
  end
  local index = tonumber(token) + 1
  if index > length + (allow_end and 1 or 0) then
    return nil, 'index ' .. token .. ' out of range'
  end
  return index
end

-- Finds the parent container of the pointer's target: parent, key (number for arrays), is_array.
local function locate(doc, pointer, for_add)
  local tokens, err = M.tokens(pointer)
  if not tokens then
    return nil, err
  end
  if #tokens == 0 then
    return { root = true }
  end
  local node = doc
  for i = 1, #tokens - 1 do
    local token = tokens[i]
    if is_array(node) then
      local index, e = array_index(token, #node, false)
      if not index then
        return nil, e
      end
      node = node[index]
    elseif type(node) == 'table' then
      node = node[token]
      if node == nil then
        return nil, 'no member ' .. token .. ' in ' .. pointer
      end
    else
      return nil, 'cannot index a scalar at ' .. pointer
    end
  end
  local last = tokens[#tokens]
  if type(node) ~= 'table' then
    return nil, 'parent of ' .. pointer .. ' is not a container'
  end
  if is_array(node) then
    local index, e = array_index(last, #node, for_add)
    if not index then
      return nil, e
    end
    return { parent = node, key = last == '-' and #node + 1 or index, array = true }
  end
  -- A missing member is not an error: the decoder may have dropped a null that the server still has.
  return { parent = node, key = last, array = false }
end

local function get(doc, pointer)
  local place, err = locate(doc, pointer, false)
  if not place then
    return nil, err
  end
  if place.root then
    return doc
  end
  return place.parent[place.key]
end

local function add(doc, pointer, value)
  local place, err = locate(doc, pointer, true)
  if not place then
    return nil, err
  end
  if place.root then
    return value
  end
  if place.array then
    table.insert(place.parent, place.key, value)
  else
    place.parent[place.key] = value
  end
  return doc
end

local function remove(doc, pointer)
  local place, err = locate(doc, pointer, false)
  if not place then
    return nil, err
  end
  if place.root then
    return nil, 'cannot remove the whole document'
  end
  local value
  if place.array then
    if place.key > #place.parent then
      return nil, 'index out of range in ' .. pointer
    end
    value = table.remove(place.parent, place.key)
  else
    value = place.parent[place.key]
    place.parent[place.key] = nil
  end
  return doc, value
end

--- Structural equality of decoded JSON values (for the `test` op). An absent object member equals null
--- (vim.NIL), since the decoder drops null members.
function M.equal(a, b)
  if a == nil then
    a = vim.NIL
  end
  if b == nil then
    b = vim.NIL
  end
  if type(a) ~= type(b) then
    return false
  end
  if type(a) ~= 'table' then
    return a == b
  end
  if is_array(a) ~= is_array(b) and not (next(a) == nil and next(b) == nil) then
    return false
  end
  for k, v in pairs(a) do
    if not M.equal(v, b[k]) then
      return false
    end
  end
  for k, v in pairs(b) do
    if a[k] == nil and v ~= vim.NIL then
      return false
    end
  end
  return true
end

--- A deep copy of decoded JSON. Not vim.deepcopy: before Neovim 0.8 it refuses userdata, and JSON null is
--- vim.NIL (userdata) wherever the decoder keeps it (array elements, values this applier stores).
local function copy(value)
  if type(value) ~= 'table' then
    return value
  end
  local result = {}
  for k, v in pairs(value) do
    result[k] = copy(v)
  end
  return setmetatable(result, getmetatable(value)) -- keeps vim.empty_dict()'s mark
end
M.copy = copy

local function apply_op(doc, op)
  local kind = op.op
  local value = op.value
  if value == nil then
    value = vim.NIL -- a null the decoder dropped
  end
  if kind == 'add' then
    return add(doc, op.path, copy(value))
  elseif kind == 'remove' then
    return remove(doc, op.path)
  elseif kind == 'replace' then
    local place, err = locate(doc, op.path, false)
    if not place then
      return nil, err
    end
    if place.root then
      return copy(value)
    end
    place.parent[place.key] = copy(value)
    return doc
  elseif kind == 'move' then
    if op.path ~= op.from and op.path:sub(1, #op.from + 1) == op.from .. '/' then
      return nil, 'cannot move ' .. op.from .. ' into itself'
    end
    local moved, err = get(doc, op.from)
    if err then
      return nil, err
    end
    if moved == nil then
      moved = vim.NIL
    end
    doc = remove(doc, op.from)
    return add(doc, op.path, moved)
  elseif kind == 'copy' then
    local copied, err = get(doc, op.from)
    if err then
      return nil, err
    end
    if copied == nil then
      copied = vim.NIL
    end
    return add(doc, op.path, copy(copied))
  elseif kind == 'test' then
    local actual, err = get(doc, op.path)
    if actual == nil and err then
      return nil, err
    end
    if actual == nil then
      actual = vim.NIL
    end
    if not M.equal(actual, value) then
      return nil, 'test failed at ' .. op.path
    end
    return doc
  end
  return nil, 'unknown op ' .. tostring(kind)
end

--- Applies `patch` (a list of operations) to a copy of `doc`. Returns the new document, or nil and
--- a message when an operation fails (the original is untouched).
function M.apply(doc, patch)
  local result = copy(doc)
  for i, op in ipairs(patch) do
    local new, err = apply_op(result, op)
    if new == nil and err then
      return nil, string.format('operation %d (%s %s): %s', i, tostring(op.op), tostring(op.path), err)
    end
    result = new
  end
  return result
end

return M
