#!/usr/bin/env bash
# Tests of storefront-sh: the demo, one-shot commands, the REPL, errors and process reaping, each against
# a fresh database in a temporary folder. Installs jq and builds the server when missing.
# Prints "N passed, N failed" and exits non-zero when anything failed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

. "$repo/scripts/lib.sh"

if ! command -v jq >/dev/null; then
    install_debian_packages jq || { echo "shell tests: could not install jq" >&2; exit 1; }
fi
build_server_unless_built "$repo" || { echo "shell tests: build failed" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/shop.sqlite
# Never the user's own token file: the session kept between one-shot runs on $db is in $work/token.
export STOREFRONT_TOKEN_FILE=$work/token
sf() { "$here/storefront-sh" --database "$db" "$@"; }
passed=0 failed=0

check() { # NAME COMMAND...: passes when the command succeeds
    local name=$1
    shift
    if "$@"; then
        passed=$((passed + 1)); echo "ok   $name"
    else
        failed=$((failed + 1)); echo "FAIL $name"
    fi
}
contains() { grep -qF -- "$2" "$1" || { echo "  '$2' not in $1:"; sed 's/^/  | /' "$1" | tail -n 20; return 1; }; }
no_server_left() { # [DATABASE]: no storefront process still uses the test database (or DATABASE)
    local left
    left=$(pgrep -f -- "--database ${1:-$db}" || true)
    [ -z "$left" ] || { echo "  servers still running: $left"; return 1; }
}

# The demo: search, product detail, add to cart, total, checkout, dashboard.
"$here/demo.sh" --database "$db" >"$work/demo.out" 2>&1
check "demo exits 0" test $? -eq 0
after() { sed -n "/$2/,\$p" "$1"; } # FILE PATTERN: its lines from the first match on
after_has() { after "$1" "$2" | grep -qxF -- "$3"; }       # FILE PATTERN LINE: that line comes after the match
check "demo searches" contains "$work/demo.out" "ok: catalog search"
check "demo finds kettles" contains "$work/demo.out" "Everyday Steel Kettle"
check "demo adds to the cart from the product" contains "$work/demo.out" "[cart #3] /totals/total: \"0.00\" -> \"680.66\""
check "demo shows the cart total" contains "$work/demo.out" "items 2  subtotal 571.98  tax 108.68  total 680.66"
check "demo computes the line total" contains "$work/demo.out" "p-0003  Smart Linen Keyboard  2 x 285.99 = 571.98"
# How many notifications a checkout takes (one turn or two) is not part of the protocol: no fixed version.
check "demo checks out" grep -qE '^ok: cart checkout -> version [0-9]+ orderId="o-000001"$' "$work/demo.out"
check "demo dashboard lists the order" contains "$work/demo.out" "o-000001  2 item(s)  total 680.66"
check "demo shows the order in the inbox" grep -qE '^  \* n-[0-9]+  ' "$work/demo.out"
check "demo reads the inbox" after_has "$work/demo.out" "^ok: notifications markAllRead" "  phase: loaded  unread: 0"
check "demo's edit moves the open ticker" grep -qE '^  \[priceTicker #[0-9]+\] /currentPrice: "285\.99" -> "279\.99"$' "$work/demo.out"
check "demo shows trending" after_has "$work/demo.out" "^\$ trending" "  trending (loaded)"
check "demo signs up" grep -qE '^registered; signed in as demo-[0-9]+-[0-9]+-[0-9]+@example.com ' "$work/demo.out"
check "demo signs out to an empty guest cart" after_has "$work/demo.out" "^signed out; now a guest" "  (empty)"
check "demo prints no password" bash -c "! grep -qE '^demo-[A-Za-z0-9]*-7\$' '$work/demo.out'"
check "demo keeps no token" test ! -e "$work/token"
check "demo leaves no server" no_server_left

# Accounts: every server is a session of its own, a guest until it signs in; the token kept in
# $STOREFRONT_TOKEN_FILE (0600) is resumed by the next run, so one-shot commands share the account's cart.
password='correct horse 1'
printf '%s\n' "$password" | sf register ann@example.com >"$work/register.out" 2>&1
check "register exits 0" test $? -eq 0
check "register says who is signed in" contains "$work/register.out" "registered; signed in as ann@example.com (ann, account 2)"  # the demo made account 1
check "the token is kept 0600" test "$(stat -c %a "$work/token")" = 600
check "the token file holds the token only" grep -qxE 'sft_[A-Za-z0-9_-]+' "$work/token"
check "no password is printed" bash -c "! grep -qF '$password' '$work/register.out'"
check "no token is printed" bash -c "! grep -qF sft_ '$work/register.out'"
sf whoami >"$work/whoami.out" 2>&1
check "the next run resumes the session" contains "$work/whoami.out" "signed in as ann@example.com (ann, account 2)"
printf '%s\n' "$password" | sf register bob@example.com >"$work/again.out" 2>&1
check "registering while signed in is refused" contains "$work/again.out" "[alreadySignedIn]"

# One-shot commands: each starts and stops its own server; the cart lives in the database.
sf cart add p-0001 2 >"$work/add.out" 2>&1
check "cart add exits 0" test $? -eq 0
check "cart add streams the new line" contains "$work/add.out" "[cart #3] /lines/0 +"
sf get cart >"$work/cart.json" 2>"$work/cart.err"
check "the cart persists across runs" jq -e '.lines == [.lines[0]] and .lines[0].productId == "p-0001" and .lines[0].quantity == 2' "$work/cart.json"
check "money is a decimal string" jq -e '(.totals.total | type) == "string" and (.totals.total | test("^[0-9]+\\.[0-9]{2}$"))' "$work/cart.json"

# Line totals are computed by render.jq on the decimal strings, in minor units: exact, never floats.
line_total() { jq -nr -L "$here" --arg p "$1" --argjson q "$2" 'include "render"; {unitPrice: $p, quantity: $q} | line_total'; }
check "a line total is exact" test "$(line_total 0.10 3)" = 0.30
check "a line total is exact beyond 2^53 cents" test "$(line_total 90071992547409.93 100)" = 9007199254740993.00
check "a negative line total keeps its sign" test "$(line_total -3.10 2)" = -6.20
check "an unreadable price shows as -" test "$(line_total 1.999 1)" = -

sf cart add p-9999 1 >"$work/unknown.out" 2>&1
check "an unknown product fails the command" test $? -ne 0
check "the refusal is shown with its reason" contains "$work/unknown.out" "[productNotFound]"
sf cart setQuantity p-0001 100000 >"$work/toomany.out" 2>&1
check "too many is refused" grep -qE 'error -32001 .*\[quantityExceeds(Stock|Maximum)\]' "$work/toomany.out"
sf raw viewModel/get '{"viewModel":"v42"}' >"$work/badhandle.out" 2>&1
check "a bad handle is an invalid-params error naming it" contains "$work/badhandle.out" "error -32602 from viewModel/get: Invalid params"
check "the error names the parameter" contains "$work/badhandle.out" "[parameter viewModel: "
sf product p-9999 >"$work/noproduct.out" 2>&1
check "a product that fails to load fails the command" test $? -ne 0
check "the load failure is shown" contains "$work/noproduct.out" "productDetail failed to load: Product p-9999 does not exist."
sf frobnicate >"$work/unknowncmd.out" 2>&1
check "an unknown command fails" test $? -ne 0

# Retries, unknown favourites, units in the cart, cart notices and catalog pages, on a database of their own.
edges=$work/edges.sqlite
sfe() { "$here/storefront-sh" --database "$edges" --token-file "$work/edges.token" "$@"; }
after_lacks() { ! after "$1" "$2" | grep -qF -- "$3"; }    # FILE PATTERN TEXT: nothing after the match has it
printf '%s\n' 'product p-9999' 'product refresh' 'show product' | sfe >"$work/retry.out" 2>&1
check "a failed product offers its retry" contains "$work/retry.out" "! Product p-9999 does not exist.  [retry: product refresh]"
check "product refresh retries the load" grep -qE '^ok: productDetail refresh -> version [0-9]+$' "$work/retry.out"
check "the retried product is still failed" after_has "$work/retry.out" "^ok: productDetail refresh" "  phase: failed"

sfe --faults 'favorites:failure-rate=1' product p-0001 >"$work/favourite.out" 2>&1
check "a favourites outage still shows the product" contains "$work/favourite.out" "p-0001  Cozy Wool Board Game"
check "its favourite is unknown and cannot change" contains "$work/favourite.out" "favourite unknown (cannot change)"
check "the outage is shown with its retry" contains "$work/favourite.out" "(retryable)  [retry: product refresh]"
printf '%s\n' 'product p-0001' 'product toggleFavorite' 'product addToCart' 'show product' 'cart clear' \
    | sfe --faults 'favorites:failure-rate=1' >"$work/toggle.out" 2>&1
check "toggling an unknown favourite is refused: loadFailed" \
    contains "$work/toggle.out" '[loadFailed]: {"content":"favorites"} (retryable)'
check "after an add the favourite stays unknown, and why shows with its retry" \
    after_has "$work/toggle.out" "^ok: productDetail addToCart" \
    "  ! The favorites service is unavailable. Please try again. (retryable)  [retry: product refresh]"
check "after an add the favourite stays unknown" \
    after_has "$work/toggle.out" "^ok: productDetail addToCart" \
    "  quantity 1 of 4  total 341.99  favourite unknown (cannot change)  (added to cart)"

printf '%s\n' 'cart add p-0001 2' 'product p-0001' | sfe >"$work/incart.out" 2>&1
check "the product counts the units in the cart" contains "$work/incart.out" "at most 5 per order; 2 in your cart"
check "and offers the rest" contains "$work/incart.out" "quantity 1 of 3  total 341.99"
sfe cart clear >/dev/null 2>&1

printf '%s\n' 'open catalog' 'cart add p-0079 1' 'catalog toggleSelection p-0079' 'catalog deleteSelected' 'show cart' \
    'cart dismissNotices' 'show cart' | sfe >"$work/notices.out" 2>&1
check "the cart names a line whose product was deleted" \
    contains "$work/notices.out" "  notice: Classic Bamboo Cutting Board was removed from your cart: it is no longer sold."
check "and how to dismiss it" contains "$work/notices.out" "  [dismiss: cart dismissNotices]"
check "cart dismissNotices clears it" after_lacks "$work/notices.out" "^ok: cart dismissNotices" "notice:"
check "and the cart shows again" after_has "$work/notices.out" "^ok: cart dismissNotices" "  (empty)"

printf '%s\n' 'open cart' 'cart refresh' 'open form' 'form refresh' | sfe --faults 'cart:failure-rate=1;catalog:failure-rate=1' \
    >"$work/outage.out" 2>&1
check "a failed cart offers its retry" contains "$work/outage.out" "(retryable)  [retry: cart refresh]"
check "a failed cart does not claim to be empty" contains "$work/outage.out" "  (the cart's lines are unknown)"
check "cart refresh retries the load" grep -qE '^ok: cart refresh -> version [0-9]+$' "$work/outage.out"
check "a form whose categories failed offers its retry" contains "$work/outage.out" "(retryable)  [retry: form refresh]"
check "form refresh retries the load" grep -qE '^ok: productForm refresh -> version [0-9]+$' "$work/outage.out"

printf '%s\n' 'catalog loadMore' 'show catalog' | sfe >"$work/more.out" 2>&1
check "loadMore appends a page" contains "$work/more.out" "  40 of 239 product(s) (loadMore for more)"
render() { jq -r -L "$here" --arg type "$1" 'include "render"; render($type)'; }
page='{"phase":"loaded","query":"","category":null,"sort":"name","error":null,"products":[],"totalCount":240,
       "hasMore":true,"selection":[],"loadMorePhase":"failed","loadMoreError":{"message":"Try again.","retryable":true}}'
check "a failed page is shown with its retry" \
    test "$(render catalog <<<"$page" | tail -n 1)" = "  ! more: Try again. (retryable)  [retry: catalog loadMore]"
check "a page loading is shown" \
    test "$(jq -c '.loadMorePhase = "loading" | .loadMoreError = null' <<<"$page" | render catalog | tail -n 1)" = "  loading more..."
check "retries leave no server" no_server_left "$edges"

# The REPL, reading commands from stdin; errors do not end the session.
printf '%s\n' 'open cart' 'cart setQuantity p-0001 3' 'cart remove p-0404' 'show cart' 'dashboard reloadSection recentOrders' \
    | sf >"$work/repl.out" 2>&1
check "the REPL reports a failed command with a non-zero status" test $? -ne 0
check "the REPL applies patches" contains "$work/repl.out" "/lines/0/quantity: 2 -> 3"
check "the REPL goes on after an error" contains "$work/repl.out" "ok: dashboard reloadSection"
check "the REPL shows the state" contains "$work/repl.out" "p-0001"
check "one-shot and REPL runs leave no server" no_server_left

# Accounts, continued: the profile, guests' refusals, signing out and in again, bad tokens.
sf profile-set name "Ann Example" >"$work/profile-set.out" 2>&1
check "profile-set saves" contains "$work/profile-set.out" "ok: profile saved"
sf profile-set bio "$(printf 'x%.0s' $(seq 501))" >"$work/bio.out" 2>&1
check "an invalid profile is refused" grep -qE 'error -32001 from profile/save: .*\[validationFailed\]' "$work/bio.out"
sf profile >"$work/profile.out" 2>&1
check "the profile shows the saved name" contains "$work/profile.out" '  name: "Ann Example"'
check "the profile shows the email" contains "$work/profile.out" '  email: "ann@example.com"'
STOREFRONT_TOKEN_FILE=$work/guest.token sf cart checkout >"$work/guest.out" 2>&1
check "a guest's checkout is refused: signInRequired" contains "$work/guest.out" "[signInRequired]"
STOREFRONT_TOKEN_FILE=$work/guest.token sf profile >"$work/guestprofile.out" 2>&1
check "a guest's profile is refused" contains "$work/guestprofile.out" "[signInRequired]"
sf logout >"$work/logout.out" 2>&1
check "logout exits 0" test $? -eq 0
check "logout says so" contains "$work/logout.out" "signed out; now a guest"
check "logout forgets the token" test ! -e "$work/token"
sf get cart >"$work/guestcart.json" 2>"$work/guestcart.err"
check "after logout the cart is a guest's: empty" jq -e '.lines == []' "$work/guestcart.json"
printf '%s\n' 'wrong password 1' | sf login ann@example.com >"$work/wrong.out" 2>&1
check "a wrong password is refused: invalidCredentials" contains "$work/wrong.out" "[invalidCredentials]"
check "and keeps no token" test ! -e "$work/token"
printf '%s\n' "$password" | sf login ann@example.com >"$work/login.out" 2>&1
check "login signs in" contains "$work/login.out" "signed in as ann@example.com (Ann Example, account 2); token kept in $work/token"
sf get cart >"$work/accountcart.json" 2>"$work/accountcart.err"
check "signed in again, the account's cart is back" jq -e '[.lines[] | {productId, quantity}] == [{productId: "p-0001", quantity: 3}]' "$work/accountcart.json"
printf '%s\n' 'sft_forged' >"$work/forged.token"
"$here/storefront-sh" --database "$db" --token-file "$work/forged.token" whoami >"$work/forged.out" 2>&1
check "a token the server refuses is forgotten" test ! -e "$work/forged.token"
check "and the run goes on as a guest" contains "$work/forged.out" "a guest"
printf '%s\n' '# a script: the password is the line after the command, and --echo does not print it' \
    'register cy@example.com' "$password" 'whoami' | STOREFRONT_TOKEN_FILE=$work/cy.token sf --echo >"$work/replreg.out" 2>&1
check "the REPL reads the password from the next line" contains "$work/replreg.out" "signed in as cy@example.com (cy, account"
check "and does not echo it" bash -c "! grep -qF '$password' '$work/replreg.out'"
printf '%s\n' "$password" | STOREFRONT_TOKEN_FILE=$work/dee.token sf register ann@example.com >"$work/taken.out" 2>&1
check "a taken email is refused: emailTaken" contains "$work/taken.out" "[emailTaken]"
sf registration setField password 'secret word 1' >"$work/pwarg.out" 2>&1
check "a password as a command word is refused" contains "$work/pwarg.out" "passwords are read, not given"
check "accounts leave no server" no_server_left

# Live screens, on a database of their own: the inbox, product edits, a ticker following another process's
# edits, trending.
live=$work/live.sqlite
sfl() { "$here/storefront-sh" --database "$live" --token-file "$work/live.token" "$@"; }
wait_for_text() { # FILE TEXT: polls until FILE holds TEXT (the 60 s bound only decides when a stuck run fails)
    for _ in $(seq 600); do grep -qF -- "$2" "$1" && return 0; sleep 0.1; done
    echo "  '$2' never came in $1:"; sed 's/^/  | /' "$1" | tail -n 20
    return 1
}
STOREFRONT_TOKEN_FILE=$work/guest.token "$here/storefront-sh" --database "$live" inbox >"$work/guestinbox.out" 2>&1
check "a guest has no inbox: signInRequired" contains "$work/guestinbox.out" "[signInRequired]"
printf '%s\n' "$password" | sfl register inbox@example.com >/dev/null 2>&1
sfl inbox >"$work/inbox0.out" 2>&1
check "a new account's inbox is empty" contains "$work/inbox0.out" "  phase: loaded  unread: 0"
check "and says so" contains "$work/inbox0.out" "  (no notifications)"
sfl cart add p-0001 1 >/dev/null 2>&1 && sfl cart checkout >/dev/null 2>&1
sfl inbox >"$work/inbox1.out" 2>&1
check "an order placed arrives in the inbox" contains "$work/inbox1.out" "  phase: loaded  unread: 1"
check "marked unread" grep -qE '^  \* n-[0-9]+  ' "$work/inbox1.out"
notification=$(sed -n 's/^  \* \(n-[0-9]*\)  .*/\1/p' "$work/inbox1.out" | head -n 1)
sfl inbox read "$notification" >"$work/inbox2.out" 2>&1
check "inbox read marks it read" contains "$work/inbox2.out" "  phase: loaded  unread: 0"
check "and shows it without its mark" grep -qE "^    $notification  " "$work/inbox2.out"
sfl cart add p-0002 1 >/dev/null 2>&1 && sfl cart checkout >/dev/null 2>&1
sfl cart add p-0002 1 >/dev/null 2>&1 && sfl cart checkout >/dev/null 2>&1
sfl inbox read-all >"$work/inbox3.out" 2>&1
check "inbox read-all marks every one read" contains "$work/inbox3.out" "  phase: loaded  unread: 0"
check "three notifications, newest first, none unread" \
    test "$(grep -cE '^    n-[0-9]+  ' "$work/inbox3.out")" = 3
check "none marked" bash -c "! grep -qE '^  \\* n-' '$work/inbox3.out'"

# `ticker p-0003 2` prints the price now, then the next two changes, made here by other processes.
sfl ticker p-0003 2 >"$work/ticker.out" 2>&1 &
watcher=$!
wait_for_text "$work/ticker.out" "p-0003  Smart Linen Keyboard  285.99  stock "
check "ticker prints the price and stock now" grep -qE '^p-0003  Smart Linen Keyboard  285\.99  stock [0-9]+$' "$work/ticker.out"
sfl edit p-0003 price=210.00 stock=12 >"$work/edit.out" 2>&1
check "edit saves a product" contains "$work/edit.out" "ok: p-0003 saved"
check "edit shows the form in edit mode" contains "$work/edit.out" "  editing p-0003"
check "with the saved price" contains "$work/edit.out" '  price: "210.00"'
wait_for_text "$work/ticker.out" "p-0003  Smart Linen Keyboard  210.00  stock 12"
sfl edit p-0003 price=205.50 >/dev/null 2>&1
wait "$watcher"
check "ticker exits 0 after its changes" test $? -eq 0
check "the ticker follows another process's edits" \
    test "$(grep '^p-0003  ' "$work/ticker.out" | tail -n 2)" = "p-0003  Smart Linen Keyboard  210.00  stock 12
p-0003  Smart Linen Keyboard  205.50  stock 12"
printf '%s\n' 'open ticker p-0003' 'ticker disconnect' 'show ticker' | sfl >"$work/tickershow.out" 2>&1
check "the ticker's history lists the stored changes" grep -qE '^    [^ ]+  205\.50  stock 12$' "$work/tickershow.out"
check "ticker disconnect stops following" contains "$work/tickershow.out" "  phase: loaded  disconnected (ticker connect follows again)"
sfl edit p-0003 price=free >"$work/badedit.out" 2>&1
check "an invalid edit fails" test $? -ne 0
check "and says why" grep -qE '\[validationFailed\]' "$work/badedit.out"
check "naming the field" grep -qE '^  ! price: ' "$work/badedit.out"

sfl product p-0003 >/dev/null 2>&1
sfl trending >"$work/trending.out" 2>&1
check "trending lists the products added to carts" grep -qE '^    p-0002  .*  views 0  adds 2$' "$work/trending.out"
check "and viewed" grep -qE '^    p-0003  Smart Linen Keyboard  205\.50  views 1  adds 0$' "$work/trending.out"
check "live screens leave no server" no_server_left "$live"

# Interrupting the client reaps its server.
mkfifo "$work/in"
set -m # job control: a background job of a script would otherwise ignore SIGINT
# And a SIGINT ignored by whatever started these tests (a job started with `&`) is inherited and cannot be
# trapped again by a non-interactive bash: start the client with SIGINT's default disposition.
env --default-signal=INT "$here/storefront-sh" --database "$db" <"$work/in" >"$work/int.out" 2>&1 &
client=$!
set +m
exec {keep}>"$work/in"
# Each wait below polls for what the client prints and ends as soon as it is there; its bound (60 s)
# only decides when a stuck client fails the test.
wait_for_output() { # TEXT: waits until the client has printed TEXT
    for _ in $(seq 600); do grep -qF -- "$1" "$work/int.out" && return 0; sleep 0.1; done
    return 1
}
echo "open catalog" >&"$keep"
wait_for_output "opened catalog"
# An idle REPL still prints changes as they stream: didAddToCart falls back by itself after 2 s.
printf '%s\n' "product p-0002" "productDetail addToCart" >&"$keep"
wait_for_output "didAddToCart: true -> false"
check "an idle REPL prints changes as they stream" contains "$work/int.out" "/didAddToCart: true -> false"
server=$(pgrep -P "$client" -f storefront || true)
check "the REPL runs a server" test -n "$server"
kill -INT "$client"
# On SIGINT the client stops its server (up to 5 s, then SIGTERM) before it exits.
for _ in $(seq 600); do kill -0 "$client" 2>/dev/null || break; sleep 0.1; done
kill -0 "$client" 2>/dev/null && { echo "  the client ignored SIGINT"; kill -KILL "$client"; }
wait "$client"
check "SIGINT ends the client with 130" test $? -eq 130
exec {keep}>&-
check "SIGINT leaves no server" no_server_left
check "SIGINT leaves no zombie" bash -c "! ps -o stat= -p '${server:-0}' | grep -q Z"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
