import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Each product's price and stock over time on PostgreSQL (table `price_point`), with the SQLite store's
/// bound (`PriceHistoryRows.maximumPointsPerProduct` points per product).
enum PostgresPriceHistory {
    /// Records `product`'s price and stock now, in the current transaction, and drops its points beyond the bound.
    ///
    /// The product's count of points (`price_history`) changes with it. (SQLite keeps it in the product's row;
    /// here a second update of that row in the transaction would compute its stored search vector again.) The callers hold the product's row lock
    /// (they updated the product first, or created it), so one product's points are recorded one transaction at
    /// a time and the count read here is exact.
    static func record(_ session: PostgresSession, _ product: Product, at now: Date) async throws {
        let points = try await session.value("""
            WITH point AS (
                INSERT INTO price_point (productId, price, stock, at)
                VALUES (\(product.id), \(product.price.minorUnits), \(Int64(product.stock)), \(StoredDate.milliseconds(now))))
            INSERT INTO price_history AS h (productId, points) VALUES (\(product.id), 1)
            ON CONFLICT (productId) DO UPDATE SET points = h.points + 1
            RETURNING points
            """, as: Int.self) ?? 0
        guard points > PriceHistoryRows.maximumPointsPerProduct else { return }
        // The oldest beyond the bound, found from the old end: a walk of as many points as go (usually one).
        try await session.execute("""
            WITH gone AS (
                DELETE FROM price_point WHERE seq IN (
                    SELECT seq FROM price_point WHERE productId = \(product.id) ORDER BY seq
                    LIMIT \(points - PriceHistoryRows.maximumPointsPerProduct))
                RETURNING 1)
            UPDATE price_history SET points = points - (SELECT COUNT(*) FROM gone) WHERE productId = \(product.id)
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
