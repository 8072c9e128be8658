#!/usr/bin/env bash
# Runs every test: the Swift unit and end-to-end tests, then the language-neutral conformance suite, the
# interop suite (third-party clients) and the clients' tests against the built server. Installs what is
# missing first. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
swift build --build-tests
swift test --skip-build

for suite in protocol/conformance protocol/interop clients/*/; do
    if [ -x "$suite/run-tests.sh" ]; then
        echo "== $suite" >&2
        "$suite/run-tests.sh"
    fi
done
