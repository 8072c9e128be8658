import GRDB

/// Migration `v14-lean-writes`: two fewer pages written by every cart change (7 → 5 for an add, the
/// commit's log frames and `pwrite`s with them), and one fewer by every other write that appends to the
/// change log.
///
/// - `change_log` loses its `AUTOINCREMENT`: each entry took the next number from `sqlite_sequence`, a page
///   of its own written by every append. A plain rowid takes the largest number + 1, which never goes back
///   as long as the newest entry is kept: ``ChangeLog/prune(_:lastSeq:now:)`` never deletes it, and the log's
///   head is read as its largest number (``ChangeLog/lastSeqSQL``).
/// - `change_log_by_time` goes: its only reader was the prune's age test, which now walks the oldest entries
///   (in number order, which is the order they were written) up to the first one young enough.
/// - `cart_line` loses its `AUTOINCREMENT`: a line's number orders a cart's lines, and the largest number + 1
///   still comes after every line there is (a number freed by a deleted newest line may be taken again, by a
///   line that is newer than all the others).
///
/// The numbering never going back is the database's rule, not only the prune's: a trigger refuses to delete
/// the newest entry, whatever deletes it (it runs for deletes only, ~500 rows every 500 appends).
///
/// The log's numbering goes on from the counter's last value: the migration writes a `reset` entry numbered
/// after it (every server on the file reloads what it shows, once), so a log that pruning had emptied does
/// not start again at 1. (`DROP TABLE` took the two tables' rows out of `sqlite_sequence`.) Servers of an
/// older version on the file read the head from the counter, which is gone: they see the log's head as 0 and
/// others' changes only when they write themselves. Stop them before upgrading; the file cannot go back to
/// an older version (README).
enum LeanWriteSchema {
    static func migrate(_ db: Database) throws {
        let counter = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'change_log'") ?? 0
        let newest = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM change_log") ?? 0
        try db.execute(sql: """
            CREATE TABLE lean_change_log (
                seq INTEGER PRIMARY KEY,
                at INTEGER NOT NULL,
                kind TEXT NOT NULL,
                subject TEXT NOT NULL
            );
            INSERT INTO lean_change_log (seq, at, kind, subject) SELECT seq, at, kind, subject FROM change_log ORDER BY seq;
            DROP TABLE change_log;
            ALTER TABLE lean_change_log RENAME TO change_log;

            CREATE TABLE lean_cart_line (
                seq INTEGER PRIMARY KEY,
                owner TEXT NOT NULL,
                productId TEXT NOT NULL REFERENCES product(id) ON DELETE CASCADE,
                quantity INTEGER NOT NULL CHECK (quantity > 0),
                UNIQUE (owner, productId)
            );
            INSERT INTO lean_cart_line (seq, owner, productId, quantity)
                SELECT seq, owner, productId, quantity FROM cart_line ORDER BY seq;
            DROP TABLE cart_line;
            ALTER TABLE lean_cart_line RENAME TO cart_line;
            CREATE INDEX cart_line_by_product ON cart_line(productId);

            CREATE TRIGGER change_log_keeps_newest BEFORE DELETE ON change_log
            WHEN OLD.seq = (SELECT MAX(seq) FROM change_log)
            BEGIN
                SELECT RAISE(ABORT, 'the newest change-log entry numbers the next one: it is never deleted');
            END;
            """)
        try db.execute(
            sql: "INSERT INTO change_log (seq, at, kind, subject) VALUES (?, CAST(strftime('%s', 'now') AS INTEGER) * 1000, 'reset', '')",
            arguments: [max(counter, newest) + 1])
    }
}
