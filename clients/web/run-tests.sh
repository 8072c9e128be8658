#!/usr/bin/env bash
# Tests of the web bridge and page: headless Chromium (Debian's chromium + chromium-driver) drives the
# page through the bridge; the bridge's refusals (token, Origin, Host) and process reaping are checked.
# Installs what is missing (apt: chromium, chromium-driver; PyPI, in clients/web/.venv: requirements.txt)
# and builds the server when missing. Screenshots go to clients/web/out/. Extra arguments go to pytest.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

. "$repo/scripts/lib.sh"

packages=(chromium chromium-driver)
python3 -c 'import venv, ensurepip' 2>/dev/null || packages+=(python3-venv)
install_debian_packages "${packages[@]}"

venv=$here/.venv
python_venv "$venv" "$here/requirements.txt"
build_server_unless_built "$repo"

cd "$here/tests"
exec "$venv/bin/python" -m pytest -q "$@"
