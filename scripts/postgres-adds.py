#!/usr/bin/env python3
"""What one durable cart/add costs a server on PostgreSQL, one at a time over pipes (BENCHMARKS.md, issue 16,
round 19).

    scripts/postgres-adds.py SERVER_BINARY POSTGRES_URL [ADDS] [--strace]

Runs SERVER_BINARY on the database at POSTGRES_URL (a throwaway one: `scripts/postgres.sh createdb DIR NAME`
prints its URL), signs up an account, opens a cart and adds one unit of a product at a time (24 products, the
cart cleared after each 24), waiting for each answer; 192 adds first, untimed. Then ADDS (default 1 000) adds and
prints, per add, the wall time and the server's CPU (user and system, from /proc); with --strace, the system
calls the server made instead (strace -c, attached for the timed adds: its counts, not its times).
"""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_server import PipeServer, adding, measure_per_call, sign_up_with_cart


def main():
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    traced = "--strace" in sys.argv[1:]
    if len(arguments) < 2:
        sys.exit(__doc__)
    binary, url = arguments[0], arguments[1]
    count = int(arguments[2]) if len(arguments) > 2 else 1000
    server = PipeServer([binary, "serve", "--database", url])
    call = lambda method, params: server.call(method, params)["result"]
    call("initialize", {"clientInfo": {"name": "postgres-adds"}})
    cart = sign_up_with_cart(call, "adds-%d-%d@example.com" % (os.getpid(), time.time_ns()))
    # p-0020 of the demo catalog is out of stock.
    products = ["p-%04d" % i for i in range(1, 26) if i != 20]
    adds = adding(call, cart, products)
    adds(8 * len(products))  # whole rounds: the timed adds start on an empty cart
    measure_per_call(server.process, count, lambda: adds(count), traced, ("add", "a clear every 24 included"), least=0.05)
    server.finish()


if __name__ == "__main__":
    main()
