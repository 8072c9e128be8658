import GRDB

/// Migration `v9-price-history-counts`: how many price points each product has (`product.pricePoints`), kept
/// by the write that adds one (see ``PriceHistoryRows``), so that keeping a history within its bound does not
/// walk it.
///
/// The count is a column of the product's row, not a table of its own: a checkout and a price change write
/// that row's page anyway, so keeping the count adds no page to their commits. The migration counts the
/// points already stored.
enum PriceHistoryCountsSchema {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE product ADD COLUMN pricePoints INTEGER NOT NULL DEFAULT 0 CHECK (pricePoints >= 0);
            UPDATE product SET pricePoints = counted.points
                FROM (SELECT productId, COUNT(*) AS points FROM price_point GROUP BY productId) AS counted
                WHERE counted.productId = product.id;
            """)
    }
}
