#!/usr/bin/env python3
"""Instructions per catalog search, by callgrind (BENCHMARKS.md, issue 16, round 9).

    scripts/callgrind-search.py SERVER_BINARY CATALOG [QUERY ...]

Runs SERVER_BINARY under valgrind --tool=callgrind on a copy of CATALOG (a seeded SQLite catalog), opens the
catalog, and searches for each QUERY in turn (default: storefront-bench's queries, in its order), waiting
for each answer: a first pass as a fresh server meets them, then, once the name order's positions (which a
server reads in the background once the catalog is shown sorted by name or a search finds them stale,
NameOrder) are read, a second pass.
Prints the instructions of each search in both passes, whole process (the page is read on a reader thread;
the first pass's windows include the positions' read where it ran). Each search includes the 300 ms debounce,
in which the idle server's change-feed poll costs a few thousand instructions. Needs valgrind.
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
    dumps = 1
    for query in queries:
        server.call("catalog/search", {"viewModel": catalog_handle, "query": query})
        server.dump("search")
        dumps += 1
    first_pass = list(range(2, dumps + 1))
    # Until a window shows no read of the positions (a server from before them never reads any).
    for _ in range(60):
        server.call("catalog/search", {"viewModel": catalog_handle, "query": "oak"})
        server.dump("waiting")
        dumps += 1
        if not server.ran(dumps, "NameOrderC4read"):
            break
    for query in queries:
        server.call("catalog/search", {"viewModel": catalog_handle, "query": query})
        server.dump("search")
        dumps += 1
    second_pass = list(range(dumps - len(queries) + 1, dumps + 1))
    server.finish()
    totals = [0, 0]
    print("%-12s %14s %14s" % ("query", "fresh server", "positions read"))
    for query, first, second in zip(queries, first_pass, second_pass):
        counts = [server.instructions(first)[0], server.instructions(second)[0]]
        totals = [totals[0] + counts[0], totals[1] + counts[1]]
        print("%-12s %14d %14d" % (query, counts[0], counts[1]))
    print("%-12s %14d %14d" % ("all", totals[0], totals[1]))


if __name__ == "__main__":
    main()
