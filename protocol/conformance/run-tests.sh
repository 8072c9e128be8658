#!/usr/bin/env bash
# Runs the conformance suite against the storefront binary: STOREFRONT_BIN, else <repo>/.build/debug/storefront
# (built with `swift build --product storefront` when missing). Keeps its own venv in .venv.
# Extra arguments go to pytest (e.g. -k batches, -x). Exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
stamp="$venv/.requirements"
if ! cmp -s "$here/requirements.txt" "$stamp"; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$stamp"
fi

if [ -z "${STOREFRONT_BIN:-}" ]; then
    STOREFRONT_BIN="$repo/.build/debug/storefront"
    if [ ! -x "$STOREFRONT_BIN" ]; then
        echo "conformance: building the server" >&2
        (cd "$repo" && swift build --product storefront >&2)
    fi
fi
export STOREFRONT_BIN

cd "$here"
exec "$venv/bin/python" -m pytest "$@"
