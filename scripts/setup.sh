#!/usr/bin/env bash
# Installs what Storefront needs to build and test, when it is missing: jansson and SQLite headers,
# and the Python packages the conformance suite and the Python client use. Safe to run again.
set -euo pipefail

debian_packages=(libjansson-dev libsqlite3-dev jq)
missing=()
for package in "${debian_packages[@]}" ${STOREFRONT_EXTRA_DEBIAN_PACKAGES:-}; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >&2
fi
