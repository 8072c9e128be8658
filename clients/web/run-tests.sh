#!/usr/bin/env bash
# Tests of the web bridge and page: headless Chromium (Debian's chromium + chromium-driver) drives the
# page through the bridge; the bridge's refusals (token, Origin, Host) and process reaping are checked.
# Installs what is missing (apt: chromium, chromium-driver; PyPI, in clients/web/.venv: requirements.txt)
# and builds the server when missing. Screenshots go to clients/web/out/. Extra arguments go to pytest.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

missing=()
for package in chromium chromium-driver; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
if ((${#missing[@]})); then
    echo "web tests: installing ${missing[*]}" >&2
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >&2
fi

venv=$here/.venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if ! cmp -s "$here/requirements.txt" "$venv/.requirements"; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$venv/.requirements"
fi

if [ -z "${STOREFRONT_BIN:-}" ] && [ ! -x "$repo/.build/debug/storefront" ] && [ ! -x "$repo/.build/release/storefront" ]; then
    echo "web tests: building the server" >&2
    (cd "$repo" && swift build --product storefront >&2)
fi

cd "$here/tests"
exec "$venv/bin/python" -m pytest -q "$@"
