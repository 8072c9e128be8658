#!/usr/bin/env python3
"""What one checkout costs, one at a time over pipes (BENCHMARKS.md, issue 16, round 16).

    scripts/checkouts.py SERVER_BINARY [SERVER_BINARY ...] CATALOG [--pairs N] [--rounds R] [--strace]

For each SERVER_BINARY, runs it on a copy of CATALOG (a seeded SQLite catalog: each commit is synced), signs up
an account, opens a cart and places orders one at a time: a cart/add of one unit of a product (untimed), then
cart/checkout, each waiting for its answer (each product bought up to 10 times); 50 pairs first, untimed. Then N pairs (default 500), timing each
checkout alone, and prints per checkout: the median and mean wall time, checkouts per second from the mean,
the server's CPU (user and system, from /proc, over the whole pairs: the adds' included), and how many
messages the server wrote per pair (answers and notifications). With several binaries, runs them in turn,
R rounds (default 1), so that the disk's hour is shared alike; a summary gives each binary's medians.

With --strace, instead counts the system calls the server makes per pair (strace -c attached for the timed
pairs; times under strace mean nothing, the counts do).
"""
import os, re, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_server import PipeServer, copy_of, products_in_stock, sign_up_with_cart


def cpu_seconds(process):
    """The user and system CPU `process` has used so far, in seconds (from /proc)."""
    fields = open("/proc/%d/stat" % process.pid).read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


class CountingServer(PipeServer):
    """A PipeServer that counts the messages it read."""
    messages = 0

    def read(self):
        self.messages += 1
        return super().read()


def run(binary, catalog, pairs, strace):
    """One server's run; returns (median µs, mean µs, user µs per pair, system µs per pair, messages per pair)."""
    folder, database = copy_of(catalog, "storefront-checkouts-")
    try:
        # Each product bought at most 10 times (its stock is then enough).
        products = products_in_stock(database, (pairs + 50) // 10 + 1, 10)
        server = CountingServer([binary, "serve", "--database", database], stderr=subprocess.DEVNULL)
        call = lambda method, params: server.call(method, params)["result"]
        call("initialize", {"clientInfo": {"name": "checkouts"}})
        cart = sign_up_with_cart(call, "checkouts@example.com")

        def pair(index):
            call("cart/add", {"viewModel": cart, "productId": products[index % len(products)], "quantity": 1})
            start = time.perf_counter()
            result = call("cart/checkout", {"viewModel": cart})
            elapsed = time.perf_counter() - start
            if not result.get("orderId"):
                sys.exit("a checkout placed no order: %s" % result)
            return elapsed

        for index in range(50):
            pair(index)
        tracer = None
        if strace:
            log = os.path.join(folder, "strace.txt")
            tracer = subprocess.Popen(["strace", "-f", "-c", "-o", log, "-p", str(server.process.pid)], stderr=subprocess.DEVNULL)
            time.sleep(1)
        user, system = cpu_seconds(server.process)
        messages = server.messages
        times = [pair(index) for index in range(pairs)]
        user_after, system_after = cpu_seconds(server.process)
        messages = server.messages - messages
        if tracer:
            tracer.send_signal(2)
            tracer.wait()
            print("%s: system calls per add+checkout pair (those under 0.01 left out):" % binary)
            for line in open(log):
                match = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", line)
                if match and match.group(2) != "total" and int(match.group(1)) >= pairs / 100:
                    print("  %-16s %6.2f" % (match.group(2), int(match.group(1)) / pairs))
        server.finish()
        return (statistics.median(times) * 1e6, statistics.mean(times) * 1e6,
                (user_after - user) / pairs * 1e6, (system_after - system) / pairs * 1e6, messages / pairs)
    finally:
        shutil.rmtree(folder)


def main():
    arguments, options, index = [], {}, 1
    while index < len(sys.argv):
        argument = sys.argv[index]
        if argument in ("--pairs", "--rounds"):
            options[argument] = int(sys.argv[index + 1])
            index += 2
            continue
        if argument == "--strace":
            options[argument] = True
        else:
            arguments.append(argument)
        index += 1
    if len(arguments) < 2:
        sys.exit(__doc__)
    binaries, catalog = arguments[:-1], arguments[-1]
    pairs, rounds = options.get("--pairs", 500), options.get("--rounds", 1)
    results = {binary: [] for binary in binaries}
    for _ in range(rounds):
        for binary in binaries:
            figures = run(binary, catalog, pairs, options.get("--strace", False))
            results[binary].append(figures)
            if not options.get("--strace"):
                print("%s: checkout median %.0f µs, mean %.0f µs (%.0f/s); server CPU per pair user %.0f µs, system %.0f µs; %.1f messages per pair"
                      % ((binary,) + figures[:2] + (1e6 / figures[1],) + figures[2:]), flush=True)
    if rounds > 1 and not options.get("--strace"):
        print("medians of %d rounds:" % rounds)
        for binary, runs in results.items():
            columns = [statistics.median(run[column] for run in runs) for column in range(5)]
            print("  %s: checkout median %.0f µs, mean %.0f µs (%.0f/s); CPU per pair user %.0f µs, system %.0f µs; %.1f messages"
                  % (binary, columns[0], columns[1], 1e6 / columns[1], columns[2], columns[3], columns[4]))


if __name__ == "__main__":
    main()
