#!/usr/bin/env python3
"""What a durable SQLite commit costs by the number of pages it writes, on this disk (BENCHMARKS.md, issue 16,
round 10): the floor under a checkout, which writes 19 pages, against a cart change's 7.

    scripts/sync-cost-by-pages.py [FOLDER]

In a new database in FOLDER (default: the system's temporary folder; use the disk the shop's file is on),
in WAL mode, commits 1 500 transactions that each update one row of N tables with new bytes, for N = 1, 7, 19
and 26, first with `synchronous=FULL` (a sync per commit, as the server's writer) and then with
`synchronous=OFF` (the CPU alone); prints commits per second for each, twice. New bytes matter: SQLite writes
no page for a row rewritten with equal bytes, and such a commit syncs nothing.
"""
import os, shutil, sqlite3, sys, tempfile, time

TABLES = 30
ROWS = 200


def rates(folder, synchronous):
    directory = tempfile.mkdtemp(prefix="sync-cost-", dir=folder)
    try:
        db = sqlite3.connect(os.path.join(directory, "pages.sqlite"), isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = %s" % synchronous)
        db.execute("BEGIN")
        for table in range(TABLES):
            db.execute("CREATE TABLE t%d (id INTEGER PRIMARY KEY, v BLOB)" % table)
            db.executemany("INSERT INTO t%d VALUES (?, randomblob(100))" % table, [(row,) for row in range(ROWS)])
        db.execute("COMMIT")
        figures = []
        for pages in (1, 7, 19, 26):
            commits = 1_500
            start = time.perf_counter()
            for commit in range(commits):
                db.execute("BEGIN IMMEDIATE")
                for table in range(pages):
                    db.execute("UPDATE t%d SET v = randomblob(100) WHERE id = ?" % table, (commit % ROWS,))
                db.execute("COMMIT")
            figures.append("%d pages %.0f/s" % (pages, commits / (time.perf_counter() - start)))
        db.close()
        return ", ".join(figures)
    finally:
        shutil.rmtree(directory)


folder = sys.argv[1] if len(sys.argv) > 1 else None
for synchronous in ("FULL", "OFF"):
    for _ in range(2):
        print("synchronous=%s: %s" % (synchronous, rates(folder, synchronous)))
