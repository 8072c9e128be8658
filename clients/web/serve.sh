#!/usr/bin/env bash
# Starts the web bridge with its Python dependencies in clients/web/.venv (made on first use).
# Arguments go to bridge.py (--port, --database, --server, --token). Open the URL it prints.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=$here/.venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if ! cmp -s "$here/requirements.txt" "$venv/.requirements"; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$venv/.requirements"
fi
exec "$venv/bin/python" "$here/bridge.py" "$@"
