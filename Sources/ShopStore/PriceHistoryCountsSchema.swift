import GRDB

/// Migration `v9-price-history-counts`: how many price points each product has, kept by the write that adds
/// one (see ``PriceHistoryRows``), so that keeping a history within its bound does not walk it.
///
/// A product with no row has no points; its row goes with the product. The migration counts the points
/// already stored.
enum PriceHistoryCountsSchema {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE price_history (
                productId TEXT PRIMARY KEY NOT NULL REFERENCES product(id) ON DELETE CASCADE,
                points INTEGER NOT NULL CHECK (points >= 0)
            ) WITHOUT ROWID;
            INSERT INTO price_history (productId, points) SELECT productId, COUNT(*) FROM price_point GROUP BY productId;
            """)
    }
}
