#!/usr/bin/env bash
# A short scripted storefront-sh session: sign up (a fresh email, so reruns work on one database), search
# the catalog, open a product and add it to the cart from there, see the cart total, check out, see the
# order on the dashboard and in the inbox, a product edit moving its live price ticker, trending, and sign
# out (the session becomes a guest with an empty cart).
#
#   clients/shell/demo.sh [--database PATH]     (default: the server's own database under $XDG_DATA_HOME)
#
# The demo account's password is made up here at random and handed to the client on its stdin (never an
# argument, never written to a file); its session token is kept in a temporary folder, removed at the end,
# so the demo never touches the token file of your own session.
#
# Installs jq and builds the server when they are missing. The build is the debug one
# (`swift build --product storefront`): it is the build `swift build`/`swift test` and the other
# clients' tests share, so the demo never pays for a second, much slower whole-program release build
# on a small machine; the demo sends a handful of requests, where debug speed makes no difference.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

. "$repo/scripts/lib.sh"

command -v jq >/dev/null || install_debian_packages jq
build_server_unless_built "$repo"

sessions=$(mktemp -d)
trap 'rm -rf "$sessions"' EXIT
email="demo-$(date -u +%Y%m%d%H%M%S)-$$-$RANDOM@example.com"
password="demo-$(head -c 12 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')-7"

# The session, one command per line; the line after `register` is the password, which --echo does not print.
session() {
    printf '%s\n' \
        "# Sign up: a new account; this session's (empty) guest cart becomes the account's." \
        "register $email" "$password" \
        "# The catalog: a search, debounced on the server; its results arrive as a patch." \
        "catalog search kettle" \
        "show catalog" \
        "# A product detail: two of them, added to the cart from the product screen. The open cart follows." \
        "open cart" \
        "product p-0003" \
        "productDetail incrementQuantity" \
        "productDetail addToCart" \
        "show cart" \
        "# Checkout places the order (guests may not); the dashboard's recent orders list it." \
        "cart checkout" \
        "open dashboard" \
        "# The inbox: the order placed is a notification, unread until read (any server on the file sees it)." \
        "inbox" \
        "inbox read-all" \
        "# Live prices: an edit stored here (or by any other process) moves every open ticker of the product." \
        "open ticker p-0003" \
        "edit p-0003 price=279.99" \
        "show ticker" \
        "# Trending: what was viewed and added to carts over the last 24 hours." \
        "trending" \
        "whoami" \
        "# Sign out: the token stops working everywhere, and this session is a fresh guest with an empty cart." \
        "logout" \
        "show cart"
}

session | STOREFRONT_TOKEN_FILE=$sessions/token "$here/storefront-sh" --echo "$@" repl
