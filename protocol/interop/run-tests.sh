#!/usr/bin/env bash
# Runs the interop suite: third-party JSON-RPC clients, used as published (pygls's JsonRPCClient and
# Emacs's jsonrpc.el), against the storefront binary: STOREFRONT_BIN, else the repository's debug or
# release build (the debug one is built when there is neither). Installs what is missing (apt: emacs-nox;
# PyPI, in protocol/interop/.venv: requirements.txt). Extra arguments go to pytest. Exits non-zero on any
# failure.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

. "$repo/scripts/lib.sh"

packages=()
command -v emacs >/dev/null || packages+=(emacs-nox)
python3 -c 'import venv, ensurepip' 2>/dev/null || packages+=(python3-venv)
install_debian_packages "${packages[@]}"

venv=$here/.venv
python_venv "$venv" "$here/requirements.txt"
build_server_unless_built "$repo"

cd "$here"
exec "$venv/bin/python" -m pytest "$@"
