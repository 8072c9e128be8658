#!/usr/bin/env python3
"""Instructions per checkout as the inbox fills, by callgrind (BENCHMARKS.md, issue 16, round 8).

    scripts/callgrind-checkout.py SERVER_BINARY CATALOG [CHECKOUTS [POINTS]]

Runs SERVER_BINARY under valgrind --tool=callgrind on a copy of CATALOG (a seeded SQLite catalog), signs up
an account (each checkout then notifies it: one inbox notification per order), opens a cart, and places
orders one at a time: a cart/add of one unit, then cart/checkout, waiting for each answer. Counts two
windows of CHECKOUTS (default 50) add/checkout pairs: the first with an almost empty inbox (after 20
untimed pairs), the second with a full one (after the inbox has passed its 500 notifications). Prints the
instructions per pair in each window, for the whole process and the main thread's part. With POINTS, each
of the 50 products bought first gets POINTS price points in its history (written into the copy before the
server opens it; a checkout adds one per product bought, and a history keeps its last 1 000). Needs valgrind.
"""
import json, os, shutil, sqlite3, subprocess, sys, tempfile


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    server, catalog = os.path.realpath(sys.argv[1]), sys.argv[2]
    window = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    points = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    folder = tempfile.mkdtemp(prefix="storefront-callgrind-checkout-")
    database = os.path.join(folder, "catalog.sqlite")
    shutil.copyfile(catalog, database)
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
    stripped = os.path.join(folder, "server")
    # valgrind 3.19 cannot read the DWARF of Swift 6.3; symbols stay.
    subprocess.run(["strip", "--strip-debug", "-o", stripped, server], check=True)
    profile = os.path.join(folder, "cg.%p")
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + profile, stripped, "serve", "--database", database],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(os.path.join(folder, "valgrind.log"), "w"))
    next_id = 0

    def call(method, params):
        nonlocal next_id
        next_id += 1
        process.stdin.write((json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}) + "\n").encode())
        process.stdin.flush()
        while True:
            message = json.loads(process.stdout.readline())
            if message.get("id") == next_id:
                if "error" in message:
                    sys.exit("%s answered %s" % (method, message))
                return message["result"]

    placed = 0

    def pairs(cart, count):
        nonlocal placed
        for _ in range(count):
            call("cart/add", {"viewModel": cart, "productId": products[placed % len(products)], "quantity": 1})
            if "orderId" not in call("cart/checkout", {"viewModel": cart}):
                sys.exit("a checkout placed no order")
            placed += 1

    def dump(name):
        subprocess.run(["callgrind_control", "--dump=" + name, str(process.pid)], check=True, capture_output=True)

    call("initialize", {"clientInfo": {"name": "callgrind-checkout"}})
    form = call("viewModel/open", {"type": "registration", "args": {}})["viewModel"]
    for field, value in [("email", "checkout@example.com"), ("password", "Bench-password-1"), ("confirmPassword", "Bench-password-1")]:
        call("registration/setField", {"viewModel": form, "field": field, "value": value})
    call("registration/setAcceptedTerms", {"viewModel": form, "accepted": True})
    call("registration/register", {"viewModel": form})
    call("viewModel/close", {"viewModel": form})
    cart = call("viewModel/open", {"type": "cart", "args": {}})["viewModel"]
    pairs(cart, 20)
    dump("before")
    pairs(cart, window)
    dump("empty")
    pairs(cart, 520 - placed)
    dump("filling")
    pairs(cart, window)
    dump("full")
    process.stdin.close()
    process.wait()
    base = profile.replace("%p", str(process.pid))
    for number, name, inbox in [(2, "empty", "%d-%d" % (20, 20 + window)), (4, "full", "500 (%d placed)" % placed)]:
        dump_file = "%s.%d" % (base, number)
        total = next(int(line.split()[1]) for line in open(dump_file) if line.startswith("summary:"))
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", dump_file],
                                   capture_output=True, text=True).stdout
        main_thread = next((int(line.split()[0].replace(",", "")) for line in annotated.splitlines()
                            if line.rstrip().endswith("StorefrontCLI_main [%s]" % stripped)), 0)
        print("%s inbox (%s notifications): %d instructions per add+checkout (whole process), %d on the main thread; profile %s"
              % (name, inbox, total // window, main_thread // window, dump_file))


if __name__ == "__main__":
    main()
