#!/usr/bin/env python3
"""Instructions per catalog search, by callgrind (BENCHMARKS.md, issue 16, round 9).

    scripts/callgrind-search.py SERVER_BINARY CATALOG [QUERY ...]

Runs SERVER_BINARY under valgrind --tool=callgrind on a copy of CATALOG (a seeded SQLite catalog), opens the
catalog, and searches for each QUERY in turn (default: storefront-bench's queries, in its order), waiting
for each answer; prints the instructions of each search, whole process (the page is read on a reader
thread). Each search includes the 300 ms debounce, in which the idle server's change-feed poll costs a few
thousand instructions. Needs valgrind.
"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_server import CallgrindServer, copy_of

QUERIES = ["a", "b", "s", "e", "st", "ch", "la", "oak", "lamp", "wool", "kettle", "desk", "oak sh", "smart linen", "zzzz"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, catalog = sys.argv[1], sys.argv[2]
    queries = sys.argv[3:] or QUERIES
    folder, database = copy_of(catalog, "storefront-callgrind-search-")
    server = CallgrindServer(binary, database, folder)
    server.call("initialize", {"clientInfo": {"name": "callgrind-search"}})
    catalog_handle = server.call("viewModel/open", {"type": "catalog"})["result"]["viewModel"]
    server.call("catalog/search", {"viewModel": catalog_handle, "query": ""})
    server.dump("opened")
    for query in queries:
        server.call("catalog/search", {"viewModel": catalog_handle, "query": query})
        server.dump("search")
    server.finish()
    total = 0
    for number, query in enumerate(queries, start=2):
        instructions, _ = server.instructions(number)
        total += instructions
        print("%-12s %12d" % (query, instructions))
    print("%-12s %12d" % ("all", total))


if __name__ == "__main__":
    main()
