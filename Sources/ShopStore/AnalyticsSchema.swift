import GRDB

/// Migration `v6-analytics`: the analytics events (see `LiveAnalyticsService`).
///
/// One row per event; dates are integer milliseconds since 1970, the shopper its storage key
/// (`g:<id>` or `a:<id>`); `seq` is a plain rowid (no AUTOINCREMENT: nothing refers to it, and the
/// append stays one b-tree insert). The index leads with the time, so the trending query (the last 24 hours, views
/// and cart adds per product) reads only that range of the index and never the table, and pruning
/// (everything older than the retention) deletes from the start of it.
enum AnalyticsSchema {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE analytics_event (
                seq INTEGER PRIMARY KEY,
                at INTEGER NOT NULL,
                kind TEXT NOT NULL,
                productId TEXT,
                quantity INTEGER,
                owner TEXT NOT NULL
            );
            CREATE INDEX analytics_event_by_time ON analytics_event(at, kind, productId);
            """)
    }
}
