#!/usr/bin/env bash
# Runs the conformance suite against the storefront binary: STOREFRONT_BIN, else <repo>/.build/debug/storefront
# (built with `swift build --product storefront` when missing). Keeps its own venv in .venv.
# Extra arguments go to pytest (e.g. -k batches, -x). Exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

. "$repo/scripts/lib.sh"

venv="$here/.venv"
python_venv "$venv" "$here/requirements.txt"

if [ -z "${STOREFRONT_BIN:-}" ]; then
    STOREFRONT_BIN="$repo/.build/debug/storefront"
    [ -x "$STOREFRONT_BIN" ] || build_server "$repo"
fi
export STOREFRONT_BIN

cd "$here"
exec "$venv/bin/python" -m pytest "$@"
