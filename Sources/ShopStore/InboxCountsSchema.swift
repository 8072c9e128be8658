import GRDB

/// Migration `v8-inbox-counts`: each inbox's notification counts, kept by the writes that change them (see
/// ``InboxRows``), so that neither a notification's arrival nor an unread count walks the inbox.
///
/// `stored` is how many notifications the owner has, `unread` how many of them are unread; an owner with no
/// row has none. The migration counts the notifications already stored.
enum InboxCountsSchema {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE inbox (
                owner TEXT PRIMARY KEY NOT NULL,
                stored INTEGER NOT NULL,
                unread INTEGER NOT NULL,
                CHECK (unread >= 0 AND unread <= stored)
            ) WITHOUT ROWID;
            INSERT INTO inbox (owner, stored, unread)
                SELECT owner, COUNT(*), SUM(readAt IS NULL) FROM notification GROUP BY owner;
            """)
    }
}
