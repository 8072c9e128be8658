#!/usr/bin/env bash
# Fuzzes the server: builds storefront-fuzz with libFuzzer and AddressSanitizer into its own scratch path
# (.build-fuzz, release) and runs it for a fixed time over the committed corpus. Not run in CI.
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
# SwiftPM's --sanitize flags reach swiftc as two -sanitize= options, of which swiftc 6.3 keeps only the last
# (address): without the combined option below, nothing gets coverage instrumentation. Release, because
# the debug build of the store runs several times slower under the sanitizers.
build=(swift build -c release --scratch-path "$scratch" --product storefront-fuzz
       --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING)

scripts/setup.sh
"${build[@]}" >&2
fuzzer="$("${build[@]}" --show-bin-path)/storefront-fuzz"
mkdir -p "$scratch/corpus" "$scratch/artifacts"
# Swift's own backtracer is off: it reads foreign memory, which AddressSanitizer reports as an overflow.
export SWIFT_BACKTRACE=enable=no
common=(-max_len=8192 -timeout=60 -rss_limit_mb=4096 -artifact_prefix="$scratch/artifacts/"
        -dict=Tests/FuzzCorpus/storefront.dict)

# The first corpus folder is where libFuzzer writes; the committed ones are only read. Leak checks after
# every input cost five times the input itself (the store frees its connection after the input returns,
# so every input looks like a possible leak to libFuzzer): the timed run leaves them to the pass below.
"$fuzzer" "${common[@]}" -max_total_time="$seconds" -detect_leaks=0 -print_final_stats=1 \
    "$@" "$scratch/corpus" Tests/FuzzCorpus/seeds Tests/FuzzCorpus/crashes

echo "fuzz.sh: leak pass over the corpus" >&2
"$fuzzer" "${common[@]}" -runs=0 -detect_leaks=1 "$scratch/corpus" Tests/FuzzCorpus/seeds Tests/FuzzCorpus/crashes
