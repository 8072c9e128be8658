import GRDB

/// Migration `v4-price-history`: every change of a product's price or stock, with its time (see
/// ``PriceHistoryRows``). Each existing product starts its history with its price and stock as they are.
enum PriceHistorySchema {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE price_point (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                productId TEXT NOT NULL REFERENCES product(id) ON DELETE CASCADE,
                price INTEGER NOT NULL CHECK (price >= 0),
                stock INTEGER NOT NULL CHECK (stock >= 0),
                at INTEGER NOT NULL
            );
            CREATE INDEX price_point_by_product ON price_point(productId, seq);
            INSERT INTO price_point (productId, price, stock, at) SELECT id, price, stock, createdAt FROM product ORDER BY seq;
            """)
    }
}
