-- Unit tests of the cart line totals: unitPrice × quantity computed exactly on decimal strings.
-- Run: nvim --headless -u NONE -c 'set rtp+=clients/nvim' -c 'luafile ...' (see run-tests.sh)
local function say(text)
  io.stdout:write(text, "\n")
end
local money = require('storefront.money')
local failures, count = 0, 0

local function case(unit_price, quantity, expected)
  count = count + 1
  local result = money.times(unit_price, quantity)
  if result ~= expected then
    failures = failures + 1
    say(string.format('FAIL %s x %s: got %s, want %s', tostring(unit_price), tostring(quantity), tostring(result),
      tostring(expected)))
  end
end

case('400.99', 2, '801.98')
case('0.10', 3, '0.30')
case('19.99', 3, '59.97')
case('1.15', 100, '115.00')
case('0.00', 7, '0.00')
case('5', 1, '5.00')
case('0.5', 3, '1.50')
case('-3.10', 2, '-6.20')
case('-0.05', 0, '0.00')
case('90071992547409.93', 100, '9007199254740993.00')
case('12,50', 1, nil)
case('1.999', 1, nil)
case('1.', 1, nil)
case('.5', 1, nil)
case('1.00', 1.5, nil)
case(19.99, 1, nil)

say(string.format('money: %d passed, %d failed', count - failures, failures))
if failures > 0 then
  vim.cmd('cquit 1')
end
vim.cmd('qall!')
