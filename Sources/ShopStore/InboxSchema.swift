import GRDB

/// Migration `v5-inbox`: each account's stored notifications (see ``InboxRows``).
///
/// `seq` numbers notifications across accounts and names them (`n-<seq>`); an inbox pages newest first
/// by `(owner, seq)`. `readAt` is null while unread. Dates are integer milliseconds since 1970.
enum InboxSchema {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE notification (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                owner TEXT NOT NULL,
                kind TEXT NOT NULL,
                title TEXT NOT NULL,
                body TEXT NOT NULL,
                productId TEXT,
                orderId TEXT,
                createdAt INTEGER NOT NULL,
                readAt INTEGER
            );
            CREATE INDEX notification_by_owner ON notification(owner, seq);
            """)
    }
}
