#!/usr/bin/env bash
# The main job: builds `storefront` if needed and runs the shell client's demo session (catalog search,
# add to cart from a product detail, dashboard) on the embedded default database.
# Extra arguments go to the demo (e.g. --database PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec clients/shell/demo.sh "$@"
