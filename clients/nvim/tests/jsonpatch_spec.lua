-- Unit tests of the Lua JSON Patch applier: RFC 6902 appendix A cases and a few edge cases.
-- Run: nvim --headless -u NONE -c 'set rtp+=clients/nvim' -l ... (see run-tests.sh)
local function say(text)
  io.stdout:write(text, "\n")
end
local jsonpatch = require('storefront.jsonpatch')
local failures, count = 0, 0

local function decode(text)
  return vim.json.decode(text, { luanil = { object = true } })
end

local function case(name, doc, patch, expected)
  count = count + 1
  local result, err = jsonpatch.apply(decode(doc), decode(patch))
  local ok
  if expected == nil then
    ok = result == nil and err ~= nil
  else
    ok = result ~= nil and jsonpatch.equal(result, decode(expected))
  end
  if not ok then
    failures = failures + 1
    say(string.format('FAIL %s: got %s (%s), want %s', name, vim.inspect(result), tostring(err), tostring(expected)))
  end
end

case('add member', '{"foo":"bar"}', '[{"op":"add","path":"/baz","value":"qux"}]', '{"baz":"qux","foo":"bar"}')
case('add array element', '{"foo":["bar","baz"]}', '[{"op":"add","path":"/foo/1","value":"qux"}]', '{"foo":["bar","qux","baz"]}')
case('append', '{"foo":["bar"]}', '[{"op":"add","path":"/foo/-","value":"qux"}]', '{"foo":["bar","qux"]}')
case('add at end index', '{"foo":["bar"]}', '[{"op":"add","path":"/foo/1","value":"qux"}]', '{"foo":["bar","qux"]}')
case('add past end', '{"foo":["bar"]}', '[{"op":"add","path":"/foo/2","value":"qux"}]', nil)
case('remove member', '{"baz":"qux","foo":"bar"}', '[{"op":"remove","path":"/baz"}]', '{"foo":"bar"}')
case('remove element', '{"foo":["bar","qux","baz"]}', '[{"op":"remove","path":"/foo/1"}]', '{"foo":["bar","baz"]}')
case('remove out of range', '{"foo":["bar"]}', '[{"op":"remove","path":"/foo/1"}]', nil)
case('replace', '{"baz":"qux","foo":"bar"}', '[{"op":"replace","path":"/baz","value":"boo"}]', '{"baz":"boo","foo":"bar"}')
case('replace root', '{"a":1}', '[{"op":"replace","path":"","value":{"b":2}}]', '{"b":2}')
case('move member', '{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}',
  '[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]',
  '{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}')
case('move element', '{"foo":["all","grass","cows","eat"]}', '[{"op":"move","from":"/foo/1","path":"/foo/3"}]',
  '{"foo":["all","cows","eat","grass"]}')
case('copy', '{"a":{"b":[1,2]}}', '[{"op":"copy","from":"/a/b","path":"/c"}]', '{"a":{"b":[1,2]},"c":[1,2]}')
case('test ok', '{"baz":"qux","foo":["a",2,"c"]}',
  '[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]', '{"baz":"qux","foo":["a",2,"c"]}')
case('test fails', '{"baz":"qux"}', '[{"op":"test","path":"/baz","value":"bar"}]', nil)
case('escapes', '{"/":9,"~1":10}', '[{"op":"test","path":"/~01","value":10},{"op":"replace","path":"/~1","value":1}]',
  '{"/":1,"~1":10}')
case('missing parent', '{"foo":"bar"}', '[{"op":"add","path":"/baz/bat","value":"qux"}]', nil)
case('atomic', '{"a":1}', '[{"op":"replace","path":"/a","value":2},{"op":"test","path":"/a","value":3}]', nil)
case('null replaced (decoder dropped it)', '{"error":null,"x":1}', '[{"op":"replace","path":"/error","value":{"m":"x"}}]',
  '{"error":{"m":"x"},"x":1}')
case('replace with null', '{"error":{"m":"x"},"x":1}', '[{"op":"replace","path":"/error","value":null}]', '{"error":null,"x":1}')
case('add nulls, then patch again', '{"a":[1],"x":1}',
  '[{"op":"add","path":"/b","value":null},{"op":"add","path":"/a/-","value":null},{"op":"replace","path":"/x","value":2}]',
  '{"a":[1,null],"b":null,"x":2}')
case('null elements survive later patches', '{"a":[null,1]}', '[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/a","path":"/c"}]',
  '{"a":[null,1],"b":null,"c":[null,1]}')
case('nested array in array', '[[1,2],[3]]', '[{"op":"add","path":"/1/0","value":0},{"op":"remove","path":"/0/0"}]', '[[2],[0,3]]')

-- a document holding a null (vim.NIL, as a replace with null leaves it) takes the next patch: the state after
-- `/error` went back to null must take the next notification's patch
count = count + 1
local after_null = jsonpatch.apply(decode('{"error":{"m":"x"},"phase":"failed"}'),
  decode('[{"op":"replace","path":"/error","value":null},{"op":"replace","path":"/phase","value":"loading"}]'))
local ok_next, next_doc = pcall(jsonpatch.apply, after_null, decode('[{"op":"replace","path":"/phase","value":"failed"}]'))
if not (ok_next and next_doc and next_doc.phase == 'failed' and next_doc.error == vim.NIL) then
  failures = failures + 1
  say('FAIL a document holding vim.NIL takes the next patch: ' .. tostring(next_doc))
end

-- the input document is never modified
local doc = decode('{"a":[1]}')
jsonpatch.apply(doc, decode('[{"op":"add","path":"/a/-","value":2}]'))
count = count + 1
if #doc.a ~= 1 then
  failures = failures + 1
  say('FAIL apply modified its input')
end

say(string.format('jsonpatch: %d passed, %d failed', count - failures, failures))
if failures > 0 then
  vim.cmd('cquit 1')
end
vim.cmd('qall!')
