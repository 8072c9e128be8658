#!/usr/bin/env python3
"""What one durable cart/add costs the server, one at a time over pipes (BENCHMARKS.md, issue 16, round 11).

    scripts/durable-adds.py SERVER_BINARY CATALOG [ADDS] [--strace | --callgrind]

Runs SERVER_BINARY on a copy of CATALOG (a seeded SQLite catalog: each commit is synced), signs up an account,
opens a cart and adds one unit of a product at a time (50 products, the cart cleared after each 50), waiting for
each answer; 400 adds first, untimed. Then ADDS (default 2 000) adds and prints, per add:

- by default, the wall time and the server's CPU (user and system, from /proc);
- with --strace, the system calls the server made (strace -c, attached for the timed adds; times under strace
  mean nothing, the counts do);
- with --callgrind, the instructions (the server under valgrind --tool=callgrind, ADDS default 200): the whole
  process's and the main thread's part. The main thread's count includes the change feed's 20 ms poll, which runs
  more often the slower the run, so runs spread by a few %.
"""
import os, shutil, sqlite3, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_server import CallgrindServer, PipeServer, copy_of, measure_per_call, sign_up_with_cart


def main():
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    mode = next((a for a in sys.argv[1:] if a in ("--strace", "--callgrind")), None)
    if len(arguments) < 2:
        sys.exit(__doc__)
    binary, catalog = arguments[0], arguments[1]
    count = int(arguments[2]) if len(arguments) > 2 else (200 if mode == "--callgrind" else 2000)
    folder, database = copy_of(catalog, "storefront-durable-adds-")
    keeps_profile = False
    try:
        keeps_profile = measure(binary, database, count, mode, folder)
    finally:
        if not keeps_profile:
            shutil.rmtree(folder)


def adding(call, cart, products):
    """A function that adds `n` units one at a time, clearing the cart after each 50."""
    def adds(n):
        for index in range(n):
            call("cart/add", {"viewModel": cart, "productId": products[index % 50], "quantity": 1})
            if index % 50 == 49:
                call("cart/clear", {"viewModel": cart})
    return adds


def measure(binary, database, count, mode, folder):
    """Measures and prints as the module's documentation says. Returns whether `folder` holds a profile to keep."""
    copy = sqlite3.connect(database)
    products = [row[0] for row in copy.execute("SELECT id FROM product WHERE stock > 50 LIMIT 50")]
    copy.close()
    server = CallgrindServer(binary, database, folder) if mode == "--callgrind" else PipeServer([binary, "serve", "--database", database])
    call = lambda method, params: server.call(method, params)["result"]
    call("initialize", {"clientInfo": {"name": "durable-adds"}})
    adds = adding(call, sign_up_with_cart(call, "adds@example.com"), products)
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
    measure_per_call(server.process, count, lambda: adds(count), mode == "--strace", ("add", "a clear every 50 included"))
    server.finish()
    return False


if __name__ == "__main__":
    main()
