import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Each product's price and stock over time on PostgreSQL (table `price_point`), with the SQLite store's
/// bound (`PriceHistoryRows.maximumPointsPerProduct` points per product).
enum PostgresPriceHistory {
    /// Records `product`'s price and stock now, in the current transaction, and drops its points beyond the bound.
    static func record(_ session: PostgresSession, _ product: Product, at now: Date) async throws {
        try await session.execute("""
            INSERT INTO price_point (productId, price, stock, at)
            VALUES (\(product.id), \(product.price.minorUnits), \(Int64(product.stock)), \(StoredDate.milliseconds(now)))
            """)
        try await session.execute("""
            DELETE FROM price_point WHERE productId = \(product.id) AND seq <= (
                SELECT seq FROM price_point WHERE productId = \(product.id) ORDER BY seq DESC LIMIT 1
                OFFSET \(PriceHistoryRows.maximumPointsPerProduct))
            """)
    }

    /// Records the current price and stock of the product `id`, if it exists.
    static func recordCurrent(_ session: PostgresSession, productId id: String, at now: Date) async throws {
        guard let product = try await PostgresRows.product(session, id: id) else { return }
        try await record(session, product, at: now)
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
