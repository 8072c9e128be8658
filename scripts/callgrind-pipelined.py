#!/usr/bin/env python3
"""Instructions per pipelined durable cart/add, by callgrind (BENCHMARKS.md, issue 16, round 6).

    scripts/callgrind-pipelined.py SERVER_BINARY CATALOG [BURSTS]

Runs SERVER_BINARY under valgrind --tool=callgrind on a copy of CATALOG (a seeded SQLite catalog, e.g. the
100 000-product one storefront-bench makes in /tmp), opens a cart, and writes BURSTS (default 20) bursts of
50 cart/add requests in one write each (50 different products, one unit each), reading every answer, with
a cart/clear after each burst; 3 bursts first are not counted. Prints the instructions per add (the clears'
share included), for the whole process and for the main thread's part (what is below StorefrontCLI_main;
the rest is the analytics recorder's writer and the change feed's poll). Needs valgrind and python3.
Counts repeat within ~2 % on a busy machine; times under valgrind mean nothing.
"""
import os, sqlite3, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_server import CallgrindServer, copy_of


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, catalog = sys.argv[1], sys.argv[2]
    bursts = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    folder, database = copy_of(catalog, "storefront-callgrind-pipelined-")
    products = [row[0] for row in sqlite3.connect(database).execute("SELECT id FROM product WHERE stock > 10 LIMIT 50")]
    server = CallgrindServer(binary, database, folder)

    def burst(cart):
        server.write(b"".join(server.request("cart/add", {"viewModel": cart, "productId": product, "quantity": 1})
                              for product in products))
        answers = 0
        while answers < len(products):
            message = server.read()
            if "id" in message:
                if "error" in message:
                    sys.exit("cart/add answered %s" % message)
                answers += 1
        server.call("cart/clear", {"viewModel": cart})

    server.call("initialize", {"clientInfo": {"name": "callgrind-pipelined"}})
    cart = server.call("viewModel/open", {"type": "cart", "args": {}})["result"]["viewModel"]
    for _ in range(3):
        burst(cart)
    server.dump("before")
    for _ in range(bursts):
        burst(cart)
    server.dump("bursts")
    server.finish()
    total, main_thread = server.instructions(2)
    adds = bursts * len(products)
    print("%d pipelined adds: %d instructions per add (whole process), %d on the main thread; profile %s"
          % (adds, total // adds, main_thread // adds, server.dump_file(2)))


if __name__ == "__main__":
    main()
