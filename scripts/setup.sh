#!/usr/bin/env bash
# Installs what Storefront needs to build and test, when it is missing: jansson, SQLite and libsodium headers,
# and the Python packages the conformance suite and the Python client use. Safe to run again.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# shellcheck disable=SC2086 # the extra packages are a space-separated list
install_debian_packages libjansson-dev libsqlite3-dev libsodium-dev jq ${STOREFRONT_EXTRA_DEBIAN_PACKAGES:-}
