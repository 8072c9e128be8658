import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Each product's price and stock over time on PostgreSQL (table `price_point`), with the SQLite store's
/// bound (`PriceHistoryRows.maximumPointsPerProduct` points per product).
enum PostgresPriceHistory {
    /// Records `product`'s price and stock now, in the current transaction, and drops its points beyond the
    /// bound: one statement.
    ///
    /// The product's count of points (`price_history`) changes with it. (SQLite keeps it in the product's row;
    /// here a second update of that row in the transaction would compute its stored search vector again.) The
    /// callers hold the product's row lock (they updated the product first, created it, or locked it to take its
    /// stock), so one product's points are recorded one transaction at a time and the count is exact.
    static func record(_ session: PostgresSession, _ product: Product, at now: Date) async throws {
        var statement = PostgresStatement()
        try record([product], at: now, in: &statement)
        try await session.execute(statement.query("SELECT 1"))
    }

    /// Adds to `statement` the record of each product's price and stock now (one point each; the products must
    /// differ), and the drop of its points beyond the bound: changes named `point`, `counted` and
    /// `trimmed`, so that a checkout stores them in the round trip of its other changes.
    ///
    /// `counted` raises each count by the new point, but not past the bound; `trimmed` deletes as many of the
    /// oldest points as the count before (read in the statement's snapshot, which holds neither the new point nor
    /// the new count) plus one exceeds the bound. So the count stays exact where it was (see above).
    static func record(_ products: [Product], at now: Date, in statement: inout PostgresStatement) throws {
        let ids = try statement.bind(products.map(\.id))
        let prices = try statement.bind(products.map(\.price.minorUnits))
        let stocks = try statement.bind(products.map { Int64($0.stock) })
        let at = try statement.bind(StoredDate.milliseconds(now))
        let bound = try statement.bind(Int64(PriceHistoryRows.maximumPointsPerProduct))
        statement.change("point", """
            INSERT INTO price_point (productId, price, stock, at)
            SELECT t.id, t.price, t.stock, \(at) FROM unnest(\(ids)::text[], \(prices)::bigint[], \(stocks)::bigint[]) AS t(id, price, stock)
            """)
        statement.change("counted", """
            INSERT INTO price_history AS h (productId, points) SELECT id, 1 FROM unnest(\(ids)::text[]) AS id
            ON CONFLICT (productId) DO UPDATE SET points = LEAST(h.points + 1, \(bound))
            """)
        // The oldest beyond the bound, found from the old end: a walk of as many points as go (usually one).
        statement.change("trimmed", """
            DELETE FROM price_point WHERE seq IN (
                SELECT old.seq FROM price_history h CROSS JOIN LATERAL (
                    SELECT seq FROM price_point WHERE productId = h.productId ORDER BY seq LIMIT GREATEST(0, h.points + 1 - \(bound))) old
                WHERE h.productId = ANY(\(ids)::text[]))
            """)
    }

    /// The last `limit` points of a product, oldest first.
    static func history(_ session: PostgresSession, productId: String, limit: Int) async throws -> [PricePoint] {
        try await session.rows("""
            SELECT price, stock, at FROM price_point WHERE productId = \(productId) ORDER BY seq DESC LIMIT \(max(0, limit))
            """).reversed().map { row in
            let (price, stock, at) = try row.decode((Int64, Int, Int64).self)
            return PricePoint(price: Money(minorUnits: price), stock: stock, at: StoredDate.date(at))
        }
    }
}
