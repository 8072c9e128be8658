#!/usr/bin/env python3
"""Instructions per checkout as the inbox fills, by callgrind (BENCHMARKS.md, issue 16, round 8).

    scripts/callgrind-checkout.py SERVER_BINARY CATALOG [CHECKOUTS [POINTS]]

Runs SERVER_BINARY under valgrind --tool=callgrind on a copy of CATALOG (a seeded SQLite catalog), signs up
an account (each checkout then notifies it: one inbox notification per order), opens a cart, and places
orders one at a time: a cart/add of one unit, then cart/checkout, waiting for each answer. Counts two
windows of CHECKOUTS (default 50) add/checkout pairs: the first with an almost empty inbox (after 20
untimed pairs), the second with a full one (after the inbox has passed its 500 notifications; CHECKOUTS up to
480, so that the first window does not fill it). Prints the
instructions per pair in each window, for the whole process and the main thread's part. With POINTS, each
of the 50 products bought first gets POINTS price points in its history (written into the copy before the
server opens it; a checkout adds one per product bought, and a history keeps its last 1 000). Needs valgrind.
"""
import os, sqlite3, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_server import CallgrindServer, copy_of, sign_up_with_cart


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, catalog = sys.argv[1], sys.argv[2]
    window = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    points = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    folder, database = copy_of(catalog, "storefront-callgrind-checkout-")
    copy = sqlite3.connect(database)
    products = [row[0] for row in copy.execute("SELECT id FROM product WHERE stock > 50 LIMIT 50")]
    if len(products) < 50:
        sys.exit("the catalog has fewer than 50 products with more than 50 in stock")
    if points:
        for product in products:
            copy.executemany("INSERT INTO price_point (productId, price, stock, at) SELECT id, price, stock, 0 FROM product WHERE id = ?",
                             [(product,)] * points)
        # A catalog already migrated to the kept counts gets them recounted (else opening counts them).
        if any(row[1] == "pricePoints" for row in copy.execute("PRAGMA table_info(product)")):
            copy.execute("UPDATE product SET pricePoints = (SELECT COUNT(*) FROM price_point WHERE productId = product.id)"
                         " WHERE id IN (%s)" % ",".join("?" * len(products)), products)
        copy.commit()
    copy.close()
    server = CallgrindServer(binary, database, folder)
    placed = 0

    def pairs(cart, count):
        nonlocal placed
        for _ in range(count):
            server.call("cart/add", {"viewModel": cart, "productId": products[placed % len(products)], "quantity": 1})
            if "orderId" not in server.call("cart/checkout", {"viewModel": cart})["result"]:
                sys.exit("a checkout placed no order")
            placed += 1

    server.call("initialize", {"clientInfo": {"name": "callgrind-checkout"}})
    cart = sign_up_with_cart(lambda method, params: server.call(method, params)["result"], "checkout@example.com")
    pairs(cart, 20)
    server.dump("before")
    pairs(cart, window)
    server.dump("empty")
    pairs(cart, 520 - placed)
    server.dump("filling")
    pairs(cart, window)
    server.dump("full")
    server.finish()
    for number, name, inbox in [(2, "empty", "%d-%d" % (20, 20 + window)), (4, "full", "500 (%d placed)" % placed)]:
        total, main_thread = server.instructions(number)
        print("%s inbox (%s notifications): %d instructions per add+checkout (whole process), %d on the main thread; profile %s"
              % (name, inbox, total // window, main_thread // window, server.dump_file(number)))


if __name__ == "__main__":
    main()
