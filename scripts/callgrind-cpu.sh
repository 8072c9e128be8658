#!/bin/bash
# Instructions per cart change and per ping, by callgrind, for each scene of `storefront-bench --mode cpu`
# (BENCHMARKS.md, issue 16). Instruction counts repeat on a busy machine, unlike times.
#
#   scripts/callgrind-cpu.sh [SERVER_BINARY] [OUTPUT_DIR]
#
# SERVER_BINARY defaults to the static release build; storefront-bench must be built beside it
# (swift build -c release --static-swift-stdlib --scratch-path .build-release-static --product storefront-bench).
# Needs valgrind (apt-get install -y valgrind) and bc.
set -euo pipefail
cd "$(dirname "$0")/.."
server=$(realpath "${1:-.build-release-static/release/storefront}")
out=${2:-/tmp/storefront-callgrind}
bench=$(realpath .build-release-static/release/storefront-bench)
rm -rf "$out" && mkdir -p "$out"
# valgrind 3.19 cannot read the DWARF of Swift 6.3; symbols stay.
strip --strip-debug -o "$out/server" "$server"
# One profile per thread (cg.<pid>.<part>-<thread>; 01 is the main thread): the main thread's count repeats
# from run to run, while work the server batches on other threads (the analytics writer's insert of the
# events recorded, once a second) falls inside the 200 changes' window or not, by the machine's speed.
printf '#!/bin/sh\nexec valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=%s/cg.%%p %s/server "$@" 2>>%s/valgrind.log\n' \
    "$out" "$out" "$out" > "$out/run.sh"
chmod +x "$out/run.sh"
STOREFRONT_BENCH_CALLGRIND=1 "$bench" --server "$out/run.sh" --mode cpu > "$out/bench.log" 2>&1
cd "$out"
# The instructions of a dump: every thread's (all), or the main thread's (main).
count() {
    local all=0 main=0 file n
    for file in "$1"-*; do
        n=$(grep -m1 '^summary:' "$file" | awk '{print $2}')
        all=$((all + n))
        [[ $file == *-01 ]] && main=$n
    done
    echo "$all $main"
}
# Each server dumps three profiles: setup (.1), 200 changes (.2), 2 000 pings (.3).
for changes in cg.*.2-01; do
    pid=${changes#cg.}; pid=${pid%.2-01}
    scene=$(grep -m1 '^desc: Trigger' "$changes" | sed 's/.*changes-200-//')
    read -r c cm < <(count "cg.$pid.2")
    read -r p pm < <(count "cg.$pid.3")
    echo "$scene: $((c / 200)) instructions per change, $((p / 2000)) per ping, ratio $(echo "scale=1; $c / 200 / ($p / 2000)" | bc)x;" \
        "main thread $((cm / 200)) per change, $((pm / 2000)) per ping, ratio $(echo "scale=1; $cm / 200 / ($pm / 2000)" | bc)x"
done
echo "profiles in $out (callgrind_annotate --inclusive=yes $out/cg.<pid>.2-01: the main thread)"
