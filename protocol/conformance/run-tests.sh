#!/usr/bin/env bash
# Runs the conformance suite against the storefront binary: STOREFRONT_BIN, else <repo>/.build/debug/storefront
# (built with `swift build --product storefront` when missing). Keeps its own venv in .venv.
# Extra arguments go to pytest (e.g. -k batches, -x). Exits non-zero on any failure.
#
# --postgres (first argument): the same suite on PostgreSQL, in a throwaway cluster (scripts/postgres.sh)
# stopped and removed on exit. Skipped, with exit status 0, only when PostgreSQL cannot be installed.
# STOREFRONT_DATABASE=postgres://... without --postgres runs it on a server of your own.
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
if [ "${1:-}" != --postgres ]; then
    exec "$venv/bin/python" -m pytest "$@"
fi
shift
if ! installing=$("$repo/scripts/postgres.sh" install 2>&1); then
    echo "SKIPPED: PostgreSQL could not be installed: $(tail -n 1 <<<"$installing")" >&2
    exit 0
fi
[ -z "$installing" ] || echo "$installing" >&2
cluster=$(mktemp -d)
trap '"$repo/scripts/postgres.sh" stop "$cluster" || true; rm -rf "$cluster"' EXIT
STOREFRONT_DATABASE=$("$repo/scripts/postgres.sh" start "$cluster")
export STOREFRONT_DATABASE
"$venv/bin/python" -m pytest "$@"
