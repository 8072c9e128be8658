import GRDB
import Shop

/// Migration `v3-accounts`: accounts, their sessions and failed sign-ins, and an owner on every cart line,
/// favourite, cart revision and order.
///
/// A database from before accounts had one cart, one set of favourites and one order history, shared by
/// every client. They become the legacy guest's (``Shopper/legacyGuest``): nothing is lost, and the first
/// account registered on the database adopts them (see `LiveAccountService.register`).
enum AccountSchema {
    static func migrate(_ db: Database) throws {
        let legacy = Shopper.legacyGuest.storageKey
        try db.execute(sql: """
            CREATE TABLE account (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                email TEXT NOT NULL UNIQUE COLLATE NOCASE,
                passwordHash TEXT NOT NULL,
                name TEXT NOT NULL,
                bio TEXT NOT NULL DEFAULT '',
                notificationsEnabled INTEGER NOT NULL DEFAULT 1,
                createdAt INTEGER NOT NULL
            );
            CREATE TABLE account_session (
                id TEXT PRIMARY KEY NOT NULL,
                tokenDigest TEXT NOT NULL UNIQUE,
                accountId INTEGER NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                createdAt INTEGER NOT NULL,
                expiresAt INTEGER NOT NULL,
                endedAt INTEGER
            );
            CREATE INDEX account_session_by_account ON account_session(accountId);
            CREATE TABLE sign_in_failure (
                email TEXT NOT NULL COLLATE NOCASE,
                at INTEGER NOT NULL
            );
            CREATE INDEX sign_in_failure_by_email ON sign_in_failure(email, at);
            CREATE INDEX sign_in_failure_by_time ON sign_in_failure(at);

            CREATE TABLE owned_cart_line (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                owner TEXT NOT NULL,
                productId TEXT NOT NULL REFERENCES product(id) ON DELETE CASCADE,
                quantity INTEGER NOT NULL CHECK (quantity > 0),
                UNIQUE (owner, productId)
            );
            INSERT INTO owned_cart_line (seq, owner, productId, quantity)
                SELECT seq, '\(legacy)', productId, quantity FROM cart_line ORDER BY seq;
            DROP TABLE cart_line;
            ALTER TABLE owned_cart_line RENAME TO cart_line;
            CREATE INDEX cart_line_by_product ON cart_line(productId);

            CREATE TABLE owned_cart_revision (
                owner TEXT PRIMARY KEY NOT NULL,
                revision INTEGER NOT NULL
            );
            INSERT INTO owned_cart_revision (owner, revision) SELECT '\(legacy)', revision FROM cart_revision;
            DROP TABLE cart_revision;
            ALTER TABLE owned_cart_revision RENAME TO cart_revision;

            CREATE TABLE owned_favorite (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                owner TEXT NOT NULL,
                productId TEXT NOT NULL REFERENCES product(id) ON DELETE CASCADE,
                UNIQUE (owner, productId)
            );
            INSERT INTO owned_favorite (seq, owner, productId) SELECT seq, '\(legacy)', productId FROM favorite ORDER BY seq;
            DROP TABLE favorite;
            ALTER TABLE owned_favorite RENAME TO favorite;

            ALTER TABLE customer_order ADD COLUMN owner TEXT NOT NULL DEFAULT '\(legacy)';
            CREATE INDEX customer_order_by_owner ON customer_order(owner, seq);
            """)
        // Servers of the previous version on this file cannot follow owned entries: everything reloads.
        try db.execute(sql: "INSERT INTO change_log (at, kind, subject) VALUES (CAST(strftime('%s', 'now') AS INTEGER) * 1000, 'reset', '')")
    }
}
