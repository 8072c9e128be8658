# Renders a ViewModel's state for people: `render($type)` on the state gives lines of text.
# The shapes are protocol/schemas/*.json; a type this file does not know is shown as indented JSON.

def money: if . == null then "-" else . end;

# A whole number of minor units as digits ("80198") times a whole number, as digits: long multiplication,
# so no amount ever passes through jq's binary numbers.
def digits_times($n):
  reduce (explode | reverse | map(. - 48))[] as $digit ({out: [], carry: 0};
    ($digit * $n + .carry) as $v | .out += [$v % 10] | .carry = (($v - $v % 10) / 10))
  | until(.carry == 0; .out += [.carry % 10] | .carry = ((.carry - .carry % 10) / 10))
  | .out | reverse | map(. + 48) | implode;

# A cart line's total, unitPrice × quantity, computed exactly in minor units ("400.99", 2 -> "801.98");
# "-" when the price is not a decimal amount. The state carries no line totals: clients compute them.
def line_total:
  ( .quantity as $quantity
  | (.unitPrice | strings | capture("^(?<sign>-?)(?<whole>[0-9]+)(\\.(?<fraction>[0-9]{1,2}))?$")) as $price
  | if ($quantity | type) != "number" or $quantity < 0 or $quantity != ($quantity | floor) then "-"
    else ($price.whole + (($price.fraction // "") + "00")[:2]   # at least 3 digits, and so is the product
          | digits_times($quantity) | sub("^0+(?=[0-9]{3})"; "")) as $cents
    | (if $price.sign == "-" and ($cents | test("[1-9]")) then "-" else "" end) + $cents[:-2] + "." + $cents[-2:]
    end
  ) // "-";
def problem: if .error then "  ! \(.error.message)" + (if .error.retryable then " (retryable)" else "" end) else empty end;
def product_row: "  \(.id)  \(.name)  \(.price)" + (if .inStock then "" else "  (out of stock)" end);
def order_row: "  \(.id)  \(.itemCount) item(s)  total \(.total)  \(.createdAt)";

def render_catalog:
  "  phase: \(.phase)  query: \(.query | tojson)  category: \(.category // "all")  sort: \(.sort)",
  problem,
  "  \(.products | length) of \(.totalCount) product(s)" + (if .hasMore then " (loadMore for more)" else "" end),
  (.products[:15][] | product_row),
  (if (.products | length) > 15 then "  ..." else empty end),
  (if (.selection | length) > 0 then "  selected: \(.selection | join(", "))" else empty end);

def render_detail:
  "  phase: \(.phase)", problem,
  (.product // empty
    | "  \(.id)  \(.name)  \(.price)  (\(.category))",
      "  \(.description)",
      "  stock \(.stock), at most \(.maxPerOrder) per order"),
  "  quantity \(.quantity) of \(.maxQuantity)  total \(.totalPrice | money)"
    + (if .isFavorite then "  * favourite" else "" end)
    + (if .isOutOfStock then "  (out of stock)" elif .canAddToCart then "" else "  (cannot add)" end)
    + (if .didAddToCart then "  (added to cart)" else "" end);

def render_cart:
  "  phase: \(.phase)  checkout: \(.checkoutPhase)", problem,
  (if .checkoutError then "  ! checkout: \(.checkoutError.message)" else empty end),
  (if (.lines | length) == 0 then "  (empty)" else (.lines[] | "  \(.productId)  \(.name)  \(.quantity) x \(.unitPrice) = \(line_total)") end),
  (.totals | "  items \(.itemCount)  subtotal \(.subtotal)  tax \(.tax)  total \(.total)"),
  (.lastOrder // empty | "  last order: \(.id), \(.itemCount) item(s), total \(.total)");

def render_section($name; row):
  "  \($name) (\(.phase))", (if .error then "    ! \(.error.message)" else empty end),
  (.items[:5][] | "  " + row), (if (.items | length) > 5 then "    ... \(.items | length - 5) more" else empty end);

def render_dashboard:
  (.featured | render_section("featured"; product_row)),
  (.categories | render_section("categories"; "  \(.name): \(.productCount)")),
  (.recentOrders | render_section("recent orders"; order_row)),
  (.recommended | render_section("recommended"; product_row));

def render_form:
  "  phase: \(.phase)  submit: \(.submitPhase)  valid: \(.isValid)", problem,
  (.fields | to_entries[] | "  \(.key): \(.value | tojson)"),
  (.errors | to_entries[] | "  ! \(.key): \(.value)"),
  (.createdProductId // empty | "  created \(.)");

def render($type):
  if $type == "catalog" then render_catalog
  elif $type == "productDetail" then render_detail
  elif $type == "cart" then render_cart
  elif $type == "dashboard" then render_dashboard
  elif $type == "productForm" then render_form
  else tojson end;
