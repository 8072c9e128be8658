#!/usr/bin/env bash
# Builds release binaries (the Swift runtime linked statically, as releases ship) and runs storefront-bench:
# protocol figures in both framings and the shop figures on a 100 000-product catalog (seeded in /tmp on
# first use), and several servers on one file (propagation: one server's change shown by another, the
# change log's cost per durable write, two writers against one, idle CPU; ~30 s, on new files in /tmp).
# Prints a table; asserts nothing. Extra arguments go to storefront-bench, e.g.
#   scripts/bench.sh --mode search,cart --domain-runs 5
#   scripts/bench.sh --mode propagation --propagation-samples 1000
#   scripts/bench.sh --json > figures.jsonl
#   scripts/bench.sh --mode cpu                  # server CPU per cart change against a ping's (issue 16)
#   scripts/bench.sh --mode open,search,memory --products 1000000 --verbose   # cost as the shop grows
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh >&2
scratch=.build-release-static
swift build -c release --static-swift-stdlib --scratch-path "$scratch" --product storefront >&2
swift build -c release --static-swift-stdlib --scratch-path "$scratch" --product storefront-bench >&2
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -sr)" >&2
exec "$scratch/release/storefront-bench" "$@"
