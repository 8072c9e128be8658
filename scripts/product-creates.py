#!/usr/bin/env python3
"""What creating a product costs, one at a time over the wire (BENCHMARKS.md, issue 16, round 15).

    scripts/product-creates.py SERVER_BINARY CATALOG COUNT CATEGORY_ID

Runs SERVER_BINARY on a copy of CATALOG (a seeded SQLite catalog) and creates COUNT products through a
`productForm` ViewModel, as an admin's front end would: open the form, set name, price, category and
description, submit, close (once its categories have loaded); each request waits for its answer. Prints the wall time and the server's CPU time
(user + system, from /proc) per product.
"""
import json, os, shutil, subprocess, sys, tempfile, time


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    binary, catalog, count, category = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    folder = tempfile.mkdtemp(prefix="storefront-product-creates-")
    try:
        database = os.path.join(folder, "catalog.sqlite")
        shutil.copyfile(catalog, database)
        run(binary, database, count, category)
    finally:
        shutil.rmtree(folder)


def run(binary, database, count, category):
    server = subprocess.Popen([binary, "serve", "--database", database], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    next_id = [0]

    def call(method, params):
        next_id[0] += 1
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params}) + "\n").encode())
        while True:
            message = json.loads(server.stdout.readline())
            if message.get("id") == next_id[0]:
                if "error" in message:
                    sys.exit("%s failed: %s" % (method, message["error"]))
                return message["result"]

    def cpu_ticks():
        fields = open("/proc/%d/stat" % server.pid).read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    call("initialize", {"clientInfo": {"name": "product-creates"}})
    started, ticks = time.time(), cpu_ticks()
    for index in range(count):
        opened = call("viewModel/open", {"type": "productForm"})
        form, state = opened["viewModel"], opened["state"]
        while state["phase"] == "loading":  # its categories load after it opens
            state = call("viewModel/get", {"viewModel": form})["state"]
        for field, value in [("name", "Stout Wooden Desk %d" % index), ("price", "12.50"), ("category", category),
                             ("description", "A sturdy oak desk with smart linen drawers and a wool mat, number %d" % index)]:
            call("productForm/setField", {"viewModel": form, "field": field, "value": value})
        call("productForm/submit", {"viewModel": form})
        call("viewModel/close", {"viewModel": form})
    wall, ticks = time.time() - started, cpu_ticks() - ticks
    hertz = os.sysconf("SC_CLK_TCK")
    print("%d products created: %.2f ms each (wall), %.2f ms of server CPU each" % (count, wall * 1000 / count, ticks * 1000.0 / hertz / count))
    server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()
