#!/usr/bin/env python3
"""What one durable cart/add costs the server, one at a time over pipes (BENCHMARKS.md, issue 16, round 11).

    scripts/durable-adds.py SERVER_BINARY CATALOG [ADDS] [--strace | --callgrind | --latency [--pause MS]]

Runs SERVER_BINARY on a copy of CATALOG (a seeded SQLite catalog: each commit is synced), signs up an account,
opens a cart and adds one unit of a product at a time (50 products, the cart cleared after each 50), waiting for
each answer; 400 adds first, untimed. Then ADDS (default 2 000) adds and prints, per add:

- by default, the wall time and the server's CPU (user and system, from /proc);
- with --strace, the system calls the server made (strace -c, attached for the timed adds; times under strace
  mean nothing, the counts do);
- with --callgrind, the instructions (the server under valgrind --tool=callgrind, ADDS default 200): the whole
  process's and the main thread's part. The main thread's count includes the change feed's 20 ms poll, which runs
  more often the slower the run, so runs spread by a few %;
- with --latency, the distribution of the adds' round trips (each timed alone, the clears not), and what the slow
  ones (over 3x the median: a checkpoint of the log, mostly) add to the mean. With --pause MS, each add comes MS
  milliseconds after the answer to the one before, as a person's taps do (the server is idle in between).
"""
import os, shutil, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_server import CallgrindServer, PipeServer, adding, copy_of, measure_per_call, products_in_stock, sign_up_with_cart


def main():
    argv = sys.argv[1:]
    pause = 0.0
    if "--pause" in argv:
        at = argv.index("--pause")
        pause = float(argv[at + 1]) / 1000
        del argv[at:at + 2]
    arguments = [a for a in argv if not a.startswith("--")]
    mode = next((a for a in argv if a in ("--strace", "--callgrind", "--latency")), None)
    if pause and mode != "--latency":
        sys.exit("--pause goes with --latency")
    if len(arguments) < 2:
        sys.exit(__doc__)
    binary, catalog = arguments[0], arguments[1]
    count = int(arguments[2]) if len(arguments) > 2 else (200 if mode == "--callgrind" else 2000)
    folder, database = copy_of(catalog, "storefront-durable-adds-")
    keeps_profile = False
    try:
        keeps_profile = measure(binary, database, count, mode, folder, pause)
    finally:
        if not keeps_profile:
            shutil.rmtree(folder)


def print_latency(times):
    """Prints the distribution of `times` (seconds) in µs, and what those over 3x the median add to the mean."""
    times = sorted(times)
    n = len(times)
    at = lambda fraction: times[min(n - 1, int(n * fraction))] * 1e6
    median = times[n // 2]
    slow = [t for t in times if t > 3 * median]
    print("per add: mean %.0f µs, p50 %.0f, p90 %.0f, p99 %.0f, p99.9 %.0f, max %.0f"
          % (sum(times) / n * 1e6, at(0.5), at(0.9), at(0.99), at(0.999), times[-1] * 1e6))
    print("adds over 3x the median: %d of %d, adding %.1f µs to the mean; over 1 ms: %d"
          % (len(slow), n, sum(t - median for t in slow) / n * 1e6, sum(1 for t in times if t > 1e-3)))


def measure(binary, database, count, mode, folder, pause=0.0):
    """Measures and prints as the module's documentation says. Returns whether `folder` holds a profile to keep."""
    products = products_in_stock(database, 50, 50)
    server = CallgrindServer(binary, database, folder) if mode == "--callgrind" else PipeServer([binary, "serve", "--database", database])
    call = lambda method, params: server.call(method, params)["result"]
    call("initialize", {"clientInfo": {"name": "durable-adds"}})
    adds = adding(call, sign_up_with_cart(call, "adds@example.com"), products, pause)
    if mode == "--callgrind":
        adds(100)
        server.dump("before")
        adds(count)
        server.dump("adds")
        server.finish()
        total, main_thread = server.instructions(2)
        print("per add (a clear every 50 included): %d instructions, %d on the main thread; profile kept in %s"
              % (total // count, main_thread // count, server.dump_file(2)))
        return True
    adds(400)
    if mode == "--latency":
        times = []
        adds(count, times)
        print_latency(times)
    else:
        measure_per_call(server.process, count, lambda: adds(count), mode == "--strace", ("add", "a clear every 50 included"))
    server.finish()
    return False


if __name__ == "__main__":
    main()
