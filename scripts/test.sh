#!/usr/bin/env bash
# Runs every test: the Swift unit and end-to-end tests, then the language-neutral conformance suite, the
# interop suite (third-party clients) and the clients' tests against the built server, then the
# conformance suite again on PostgreSQL. Installs what is missing first. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
swift build --build-tests

# The Swift tests' PostgreSQL: a throwaway cluster (scripts/postgres.sh) whose URL they read from
# STOREFRONT_TEST_POSTGRES_URL; without it (PostgreSQL could not be installed) they skip, saying so.
postgres_dir=$(mktemp -d)
trap 'scripts/postgres.sh stop "$postgres_dir" || true; rm -rf "$postgres_dir"' EXIT
if scripts/postgres.sh install; then
    STOREFRONT_TEST_POSTGRES_URL=$(scripts/postgres.sh start "$postgres_dir")
    export STOREFRONT_TEST_POSTGRES_URL
else
    echo "PostgreSQL could not be installed: the Swift tests that need it will skip" >&2
fi
swift test --skip-build
scripts/postgres.sh stop "$postgres_dir"

for suite in protocol/conformance protocol/interop clients/*/; do
    if [ -x "$suite/run-tests.sh" ]; then
        echo "== $suite" >&2
        "$suite/run-tests.sh"
    fi
done

# The conformance suite on PostgreSQL, in a cluster of its own (skipped when it cannot be installed).
echo "== protocol/conformance on PostgreSQL" >&2
protocol/conformance/run-tests.sh --postgres
