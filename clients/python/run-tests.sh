#!/usr/bin/env bash
# Runs the Python client's tests against the storefront binary: STOREFRONT_BIN, else
# <repo>/.build/debug/storefront (built when missing). Keeps its own venv in .venv; extra args go to pytest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
stamp="$venv/.requirements"
if ! cat "$here/requirements-test.txt" "$here/pyproject.toml" | cmp -s - "$stamp"; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-test.txt"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$here"
    cat "$here/requirements-test.txt" "$here/pyproject.toml" > "$stamp"
fi

if [ -z "${STOREFRONT_BIN:-}" ]; then
    STOREFRONT_BIN="$repo/.build/debug/storefront"
    if [ ! -x "$STOREFRONT_BIN" ]; then
        echo "python client: building the server" >&2
        (cd "$repo" && swift build --product storefront >&2)
    fi
fi
export STOREFRONT_BIN

cd "$here"
exec "$venv/bin/python" -m pytest "$@"
