#!/usr/bin/env bash
# Starts the web bridge with its Python dependencies in clients/web/.venv (made on first use).
# Arguments go to bridge.py (--port, --database, --server, --token). Open the URL it prints.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../../scripts/lib.sh"
venv=$here/.venv
python_venv "$venv" "$here/requirements.txt"
exec "$venv/bin/python" "$here/bridge.py" "$@"
