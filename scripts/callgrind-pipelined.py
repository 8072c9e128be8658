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
import json, os, shutil, sqlite3, subprocess, sys, tempfile


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    server, catalog = os.path.realpath(sys.argv[1]), sys.argv[2]
    bursts = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    folder = tempfile.mkdtemp(prefix="storefront-callgrind-pipelined-")
    database = os.path.join(folder, "catalog.sqlite")
    shutil.copyfile(catalog, database)
    products = [row[0] for row in sqlite3.connect(database).execute("SELECT id FROM product WHERE stock > 10 LIMIT 50")]
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
                return message

    def burst(cart):
        nonlocal next_id
        requests = b""
        for product in products:
            next_id += 1
            requests += (json.dumps({"jsonrpc": "2.0", "id": next_id, "method": "cart/add",
                                     "params": {"viewModel": cart, "productId": product, "quantity": 1}}) + "\n").encode()
        process.stdin.write(requests)
        process.stdin.flush()
        answers = 0
        while answers < len(products):
            message = json.loads(process.stdout.readline())
            if "id" in message:
                if "error" in message:
                    sys.exit("cart/add answered %s" % message)
                answers += 1
        call("cart/clear", {"viewModel": cart})

    call("initialize", {"clientInfo": {"name": "callgrind-pipelined"}})
    cart = call("viewModel/open", {"type": "cart", "args": {}})["result"]["viewModel"]
    for _ in range(3):
        burst(cart)
    subprocess.run(["callgrind_control", "--dump=before", str(process.pid)], check=True, capture_output=True)
    for _ in range(bursts):
        burst(cart)
    subprocess.run(["callgrind_control", "--dump=bursts", str(process.pid)], check=True, capture_output=True)
    process.stdin.close()
    process.wait()
    dump = profile.replace("%p", str(process.pid)) + ".2"
    total = next(int(line.split()[1]) for line in open(dump) if line.startswith("summary:"))
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", dump],
                               capture_output=True, text=True).stdout
    main_thread = next((int(line.split()[0].replace(",", "")) for line in annotated.splitlines()
                        if line.rstrip().endswith("StorefrontCLI_main [%s]" % stripped)), 0)
    adds = bursts * len(products)
    print("%d pipelined adds: %d instructions per add (whole process), %d on the main thread; profile %s"
          % (adds, total // adds, main_thread // adds, dump))


if __name__ == "__main__":
    main()
