import GRDB

/// The database schema, as versioned migrations. Each migration runs once per database file;
/// opening a database whose migrations are all applied only reads the migrations table.
enum ShopSchema {
    /// The migrator for the shop's tables and the demo catalog.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-schema", migrate: createTables)
        migrator.registerMigration("v1-demo-catalog") { db in
            try DemoCatalog.insert(productCount: DemoCatalog.defaultProductCount, into: db)
        }
        migrator.registerMigration("v2-change-log", migrate: createChangeLog)
        migrator.registerMigration("v3-accounts", migrate: AccountSchema.migrate)
        migrator.registerMigration("v4-price-history", migrate: PriceHistorySchema.migrate)
        migrator.registerMigration("v5-inbox", migrate: InboxSchema.migrate)
        migrator.registerMigration("v6-analytics", migrate: AnalyticsSchema.migrate)
        migrator.registerMigration("v7-search-counts", migrate: SearchPrefixCounts.migrate)
        migrator.registerMigration("v8-inbox-counts", migrate: InboxCountsSchema.migrate)
        migrator.registerMigration("v9-price-history-counts", migrate: PriceHistoryCountsSchema.migrate)
        migrator.registerMigration("v10-category-counts", migrate: CategoryCounts.migrate)
        migrator.registerMigration("v11-product-key-changes", migrate: NameOrder.migrate)
        migrator.registerMigration("v12-search-counts-two-letters", migrate: SearchPrefixCounts.migrateTwoLetters)
        migrator.registerMigration("v13-search-walk-starts", migrate: SearchPrefixCounts.migrateWalkStarts)
        migrator.registerMigration("v14-lean-writes", migrate: LeanWriteSchema.migrate)
        return migrator
    }

    /// Products are numbered by `seq` (which the full-text index refers to) and named by `id`.
    /// Amounts are integer cents, dates integer milliseconds since 1970.
    private static func createTables(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE category (
                id TEXT PRIMARY KEY NOT NULL,
                name TEXT NOT NULL,
                taxRate INTEGER NOT NULL CHECK (taxRate >= 0)
            );
            CREATE TABLE product (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                description TEXT NOT NULL,
                price INTEGER NOT NULL CHECK (price >= 0),
                categoryId TEXT NOT NULL REFERENCES category(id),
                stock INTEGER NOT NULL CHECK (stock >= 0),
                maxPerOrder INTEGER NOT NULL CHECK (maxPerOrder >= 1),
                createdAt INTEGER NOT NULL,
                isFeatured INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX product_by_name ON product(name COLLATE NOCASE, id);
            CREATE INDEX product_by_price ON product(price, id);
            CREATE INDEX product_by_date ON product(createdAt, id);
            CREATE INDEX product_by_category ON product(categoryId, name COLLATE NOCASE);
            CREATE INDEX product_featured ON product(isFeatured, createdAt);
            \(ProductSearch.createIndexSQL)
            \(ProductSearch.version1TriggersSQL)
            CREATE TABLE favorite (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                productId TEXT NOT NULL UNIQUE REFERENCES product(id) ON DELETE CASCADE
            );
            CREATE TABLE cart_line (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                productId TEXT NOT NULL UNIQUE REFERENCES product(id) ON DELETE CASCADE,
                quantity INTEGER NOT NULL CHECK (quantity > 0)
            );
            CREATE TABLE cart_revision (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                revision INTEGER NOT NULL
            );
            INSERT INTO cart_revision (id, revision) VALUES (1, 0);
            CREATE TABLE customer_order (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                createdAt INTEGER NOT NULL,
                subtotal INTEGER NOT NULL,
                tax INTEGER NOT NULL,
                total INTEGER NOT NULL
            );
            CREATE TABLE order_line (
                orderId TEXT NOT NULL REFERENCES customer_order(id) ON DELETE CASCADE,
                position INTEGER NOT NULL,
                productId TEXT NOT NULL,
                name TEXT NOT NULL,
                unitPrice INTEGER NOT NULL,
                quantity INTEGER NOT NULL CHECK (quantity > 0),
                PRIMARY KEY (orderId, position)
            );
            CREATE INDEX order_line_by_product ON order_line(productId);
            """)
    }

    /// The change log every server follows (see ``ChangeLog``), and the idempotency keys of stored changes
    /// (see ``IdempotencyRecord``).
    private static func createChangeLog(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE change_log (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                at INTEGER NOT NULL,
                kind TEXT NOT NULL,
                subject TEXT NOT NULL
            );
            CREATE INDEX change_log_by_time ON change_log(at);
            CREATE TABLE idempotency_key (
                key TEXT PRIMARY KEY NOT NULL,
                fingerprint TEXT NOT NULL,
                outcome TEXT NOT NULL,
                at INTEGER NOT NULL
            );
            CREATE INDEX idempotency_key_by_time ON idempotency_key(at);
            """)
    }
}
