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
# The state's error, with the command that retries when the load failed or trying again may help.
def problem($retry):
  if .error then "  ! \(.error.message)" + (if .error.retryable then " (retryable)" else "" end)
    + (if .phase == "failed" or .error.retryable then "  [retry: \($retry)]" else "" end)
  else empty end;
def product_row: "  \(.id)  \(.name)  \(.price)" + (if .inStock then "" else "  (out of stock)" end);
def order_row: "  \(.id)  \(.itemCount) item(s)  total \(.total)  \(.createdAt)";

def render_catalog:
  "  phase: \(.phase)  query: \(.query | tojson)  category: \(.category // "all")  sort: \(.sort)",
  problem("catalog refresh"),
  "  \(.products | length) of \(.totalCount) product(s)"
    + (if .hasMore and .loadMorePhase == "idle" then " (loadMore for more)" else "" end),
  # Appending a page has its own phase: a failed page leaves the list loaded, and loadMore retries.
  (if .loadMorePhase == "loading" then "  loading more..."
   elif .loadMorePhase == "failed" then "  ! more: \(.loadMoreError.message // "the next page failed to load")"
     + (if .loadMoreError.retryable then " (retryable)" else "" end) + "  [retry: catalog loadMore]"
   else empty end),
  (.products[:15][] | product_row),
  (if (.products | length) > 15 then "  ..." else empty end),
  (if (.selection | length) > 0 then "  selected: \(.selection | join(", "))" else empty end);

# inCart: units already in the cart (maxQuantity is what may still be added); null when unknown.
def in_cart:
  if .inCart == null then "units in your cart unknown" elif .inCart == 0 then "none in your cart"
  else "\(.inCart) in your cart" end;

def render_detail:
  "  phase: \(.phase)", problem("product refresh"),
  (. as $state | .product // empty
    | "  \(.id)  \(.name)  \(.price)  (\(.category))",
      "  \(.description)",
      "  stock \(.stock), at most \(.maxPerOrder) per order; \($state | in_cart)",
      ($state
       | "  quantity \(.quantity) of \(.maxQuantity)  total \(.totalPrice | money)"
         + (if .isFavorite == null then "  favourite unknown" elif .isFavorite then "  * favourite" else "" end)
         + (if .canToggleFavorite then "" elif .isFavorite == null then " (cannot change)"
            else "  (favourite cannot change now)" end)
         # A later success (an add) clears error while the mark stays unknown: offer the retry here too.
         + (if .isFavorite == null and .error == null then "  [retry: product refresh]" else "" end)
         + (if .isOutOfStock then "  (out of stock)" elif .canAddToCart then "" else "  (cannot add)" end)
         + (if .didAddToCart then "  (added to cart)" else "" end)));

def render_cart:
  "  phase: \(.phase)  checkout: \(.checkoutPhase)", problem("cart refresh"),
  # Lines that went without the user removing them (a deleted product), until the next change.
  ((.notices // [])[] | "  notice: \(.message)"),
  (if (.notices // []) != [] then "  [dismiss: cart dismissNotices]" else empty end),
  (if .checkoutError then "  ! checkout: \(.checkoutError.message)" else empty end),
  # A cart that failed to load holds no lines and zero totals: that says nothing about the real cart.
  if .phase == "failed" and (.lines | length) == 0 then "  (the cart's lines are unknown)"
  else
    (if (.lines | length) == 0 then "  (empty)" else (.lines[] | "  \(.productId)  \(.name)  \(.quantity) x \(.unitPrice) = \(line_total)") end),
    (.totals | "  items \(.itemCount)  subtotal \(.subtotal)  tax \(.tax)  total \(.total)")
  end,
  (.lastOrder // empty | "  last order: \(.id), \(.itemCount) item(s), total \(.total)");

def render_section($name; $section; row):
  "  \($name) (\(.phase))",
  (if .error then "    ! \(.error.message)" + (if .phase == "failed" then "  [retry: dashboard reloadSection \($section)]" else "" end) else empty end),
  (.items[:5][] | "  " + row), (if (.items | length) > 5 then "    ... \(.items | length - 5) more" else empty end);

# A trending product: the last 24 hours' views and cart adds (the section is not live: reload it).
def trending_row: "  \(.product.id)  \(.product.name)  \(.product.price)  views \(.views)  adds \(.cartAdds)";

def render_dashboard:
  (.trending // empty | render_section("trending"; "trending"; trending_row)),
  (.featured | render_section("featured"; "featured"; product_row)),
  (.categories | render_section("categories"; "categories"; "  \(.name): \(.productCount)")),
  (.recentOrders | render_section("recent orders"; "recentOrders"; order_row)),
  (.recommended | render_section("recommended"; "recommended"; product_row));

def render_form:
  (if .mode == "edit" then "  editing \(.productId)" + (if .hasChanges == true then "  (unsaved changes)" else "" end) else empty end),
  "  phase: \(.phase)  submit: \(.submitPhase)  valid: \(.isValid)", problem("form refresh"),
  (.fields | to_entries[] | "  \(.key): \(.value | tojson)"),
  (.errors | to_entries[] | "  ! \(.key): \(.value)"),
  (.createdProductId // empty | "  created \(.)");

def render_login:
  (if .user then "  signed in as \(.user.email) (\(.user.name), account \(.user.id))"
   else "  a guest (\(.phase))" end),
  (.message // empty | "  ! \(.)"),
  (.lockedUntil // empty | "  sign-in locked until \(.)"),
  ((.cappedLines // [])[] | "  capped: \(.name) (\(.productId)): kept \(.kept) of \(.requested)");

def render_profile:
  "  phase: \(.phase)  save: \(.savePhase)  valid: \(.isValid)  changed: \(.hasChanges)", problem("profile refresh"),
  (.fields | to_entries[] | "  \(.key): \(.value | tojson)"),
  (.errors | to_entries[] | "  ! \(.key): \(.value)");

def render_registration:
  "  email: \(.email | tojson)  terms accepted: \(.acceptedTerms)  valid: \(.isFormValid)  submit: \(.submitPhase)",
  (.errors | to_entries[] | "  ! \(.key): \(.value)"),
  (if .signedIn then "  signed in" else empty end);

# The inbox, newest first: "*" marks an unread notification.
def render_notifications:
  "  phase: \(.phase)  unread: \(.unreadCount)" + (if .enabled == false then "  (notifications are off in the profile)" else "" end),
  problem("inbox refresh"),
  (if (.items | length) == 0 and .phase == "loaded" then "  (no notifications)" else empty end),
  (.items[] | "  \(if .isRead then " " else "*" end) \(.id)  \(.createdAt)  \(.title): \(.body)"),
  (if .loadMorePhase == "failed" then "  ! more: \(.loadMoreError.message // "the next page failed to load")  [retry: inbox more]"
   elif .hasMore then "  ... older ones: inbox more" else empty end);

# A product's live price: now, then the last changes (oldest first, as the history is kept).
def render_ticker:
  "  phase: \(.phase)  " + (if .isConnected then "connected" else "disconnected (ticker connect follows again)" end),
  problem("ticker refresh"),
  "  \(.productId)  \(.name // "")  \(.currentPrice // "-")  stock \(.stock // "-")",
  (.priceHistory[-10:][] | "    \(.at)  \(.price)  stock \(.stock)"),
  "  \(.priceHistory | length) change(s) kept";

def render($type):
  if $type == "catalog" then render_catalog
  elif $type == "productDetail" then render_detail
  elif $type == "cart" then render_cart
  elif $type == "dashboard" then render_dashboard
  elif $type == "productForm" then render_form
  elif $type == "login" then render_login
  elif $type == "profile" then render_profile
  elif $type == "registration" then render_registration
  elif $type == "notifications" then render_notifications
  elif $type == "priceTicker" then render_ticker
  else tojson end;
