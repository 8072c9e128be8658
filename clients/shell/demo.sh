#!/usr/bin/env bash
# A short scripted storefront-sh session over the three areas: search the catalog, open a product and
# add it to the cart from there, see the cart total, check out and see the order on the dashboard.
#
#   clients/shell/demo.sh [--database PATH]     (default: the server's own database under $XDG_DATA_HOME)
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

exec "$here/storefront-sh" --echo "$@" repl <<'SESSION'
# The catalog: a search, debounced on the server; its results arrive as a patch.
catalog search kettle
show catalog
# A product detail: two of them, added to the cart from the product screen. The open cart follows.
open cart
product p-0003
productDetail incrementQuantity
productDetail addToCart
show cart
# Checkout places the order; the dashboard's recent orders list it.
cart checkout
open dashboard

SESSION
