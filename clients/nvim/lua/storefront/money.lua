-- Money arrives as a decimal string ("400.99"). A cart line's total is computed here, on the string's
-- digits in minor units: exact at any size (Lua numbers are binary doubles, so neither "0.10" * 3 nor
-- cents beyond 2^53 are trusted to them).
local M = {}

--- `unit_price × quantity` as a decimal string with two decimals ("400.99", 2 -> "801.98");
--- nil when the price is not a decimal amount with at most two decimals or the quantity not a whole number.
function M.times(unit_price, quantity)
  if type(unit_price) ~= 'string' or type(quantity) ~= 'number' or quantity < 0 or quantity % 1 ~= 0 then
    return nil
  end
  local sign, whole, fraction = unit_price:match('^(%-?)(%d+)%.(%d%d?)$')
  if not sign then
    sign, whole = unit_price:match('^(%-?)(%d+)$')
    fraction = ''
  end
  if not sign then
    return nil
  end
  local cents = whole .. (fraction .. '00'):sub(1, 2)
  -- Long multiplication, least significant digit first.
  local digits, carry = {}, 0
  for i = #cents, 1, -1 do
    local value = (cents:byte(i) - 48) * quantity + carry
    digits[#digits + 1] = value % 10
    carry = (value - value % 10) / 10
  end
  while carry > 0 do
    digits[#digits + 1] = carry % 10
    carry = (carry - carry % 10) / 10
  end
  while #digits > 3 and digits[#digits] == 0 do
    digits[#digits] = nil
  end
  while #digits < 3 do
    digits[#digits + 1] = 0
  end
  local text = {}
  for i = #digits, 1, -1 do
    text[#text + 1] = string.format('%d', digits[i])
  end
  local result = table.concat(text)
  local zero = not result:find('[1-9]')
  return (sign == '-' and not zero and '-' or '') .. result:sub(1, -3) .. '.' .. result:sub(-2)
end

return M
