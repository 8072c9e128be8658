#!/usr/bin/env bash
# Runs the Python client's tests against the storefront binary: STOREFRONT_BIN, else
# <repo>/.build/debug/storefront (built when missing). Keeps its own venv in .venv; extra args go to pytest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

. "$repo/scripts/lib.sh"

venv="$here/.venv"
python_venv "$venv" "$here/requirements-test.txt" "$here"

if [ -z "${STOREFRONT_BIN:-}" ]; then
    STOREFRONT_BIN="$repo/.build/debug/storefront"
    [ -x "$STOREFRONT_BIN" ] || build_server "$repo"
fi
export STOREFRONT_BIN

cd "$here"
exec "$venv/bin/python" -m pytest "$@"
