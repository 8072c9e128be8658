#!/usr/bin/env python3
"""Which pages each commit of a cart change and of a checkout writes, read from the write-ahead log
(BENCHMARKS.md, issue 16, round 10).

    scripts/commit-pages.py SERVER_BINARY CATALOG [PAIRS]

Runs SERVER_BINARY on a copy of CATALOG (a seeded SQLite catalog), signs up an account, opens a cart and
places PAIRS (default 8) orders one at a time (a cart/add of one unit, then cart/checkout). While the server
still runs (so that its log is not checkpointed away on close), copies the database and its log, splits the
log's frames into transactions at their commit frames, and prints the last four: the number of pages each
wrote and the table or index each page belongs to (SQLite's `dbstat` table on the copy). Each page is a frame
of the log: a 24-byte header and the page, written by two `pwrite`s before the commit's `fdatasync`.
"""
import os, shutil, sqlite3, struct, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_server import PipeServer, products_in_stock, sign_up_with_cart


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, catalog = sys.argv[1], sys.argv[2]
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    folder = tempfile.mkdtemp(prefix="storefront-commit-pages-")
    try:
        run(binary, catalog, pairs, folder)
    finally:
        shutil.rmtree(folder)


def run(binary, catalog, pairs, folder):
    database = os.path.join(folder, "catalog.sqlite")
    shutil.copyfile(catalog, database)
    products = products_in_stock(database, pairs, 50)
    server = PipeServer([binary, "serve", "--database", database], stderr=subprocess.DEVNULL)
    call = lambda method, params: server.call(method, params)["result"]

    call("initialize", {"clientInfo": {"name": "commit-pages"}})
    cart = sign_up_with_cart(call, "pages@example.com")
    for product in products:
        call("cart/add", {"viewModel": cart, "productId": product, "quantity": 1})
        call("cart/checkout", {"viewModel": cart})
    snapshot = os.path.join(folder, "snapshot.sqlite")
    shutil.copyfile(database, snapshot)
    shutil.copyfile(database + "-wal", snapshot + "-wal")
    server.finish()

    log = open(snapshot + "-wal", "rb").read()
    page_size = struct.unpack(">I", log[8:12])[0]
    transactions, pages, offset = [], [], 32
    while offset + 24 + page_size <= len(log):
        page, size_after_commit = struct.unpack(">II", log[offset:offset + 8])
        pages.append(page)
        if size_after_commit:
            transactions.append(pages)
            pages = []
        offset += 24 + page_size
    names = {page: name for name, page in sqlite3.connect(snapshot).execute("SELECT name, pageno FROM dbstat")}
    for written in transactions[-4:]:
        print("%2d pages: %s" % (len(written), ", ".join(names.get(page, "page %d" % page) for page in written)))


main()
