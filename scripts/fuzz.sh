#!/usr/bin/env bash
# Fuzzes the server: builds storefront-fuzz with libFuzzer and AddressSanitizer into its own scratch path
# (.build-fuzz) and runs it for a fixed time over the committed corpus. Not run in CI.
#
#   scripts/fuzz.sh [SECONDS] [LIBFUZZER-FLAG...]      # default 120 s, e.g. scripts/fuzz.sh 600 -seed=1
#
# New interesting inputs go to .build-fuzz/corpus (Tests/FuzzCorpus stays as committed); a crash, leak or
# broken invariant stops the run and is saved under .build-fuzz/artifacts/. To keep one as a regression
# test, copy it to Tests/FuzzCorpus/crashes/ with a name saying what broke.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-120}
shift || true
scratch=.build-fuzz
build=(swift build --scratch-path "$scratch" --product storefront-fuzz
       --sanitize fuzzer --sanitize address -Xswiftc -DFUZZING)

scripts/setup.sh
"${build[@]}" >&2
fuzzer="$("${build[@]}" --show-bin-path)/storefront-fuzz"
mkdir -p "$scratch/corpus" "$scratch/artifacts"

# The first corpus folder is where libFuzzer writes; the committed ones are only read. Swift's own
# backtracer is off: it reads foreign memory, which AddressSanitizer reports as an overflow of its own.
SWIFT_BACKTRACE=enable=no exec "$fuzzer" \
    -max_total_time="$seconds" -max_len=8192 -timeout=60 -rss_limit_mb=4096 \
    -dict=Tests/FuzzCorpus/storefront.dict -artifact_prefix="$scratch/artifacts/" -print_final_stats=1 \
    "$@" "$scratch/corpus" Tests/FuzzCorpus/seeds Tests/FuzzCorpus/crashes
