import Foundation
import GRDB
import Shop

/// The `price_point` rows: a product's price history, written in the transaction that changes its price
/// or stock.
package enum PriceHistoryRows {
    /// The most points kept per product; older ones are deleted as new ones are written.
    package static let maximumPointsPerProduct = 1_000

    /// Records `product`'s price and stock as of `now`, and forgets its points beyond the last
    /// ``maximumPointsPerProduct``.
    static func record(_ db: Database, _ product: Product, at now: Date) throws {
        try db.cachedStatement(sql: "INSERT INTO price_point (productId, price, stock, at) VALUES (?, ?, ?, ?)")
            .execute(arguments: [product.id, product.price.minorUnits, product.stock, StoredDate.milliseconds(now)])
        let seq = db.lastInsertedRowID
        try db.cachedStatement(sql: """
            DELETE FROM price_point WHERE productId = ? AND seq <= ? AND seq <= (
                SELECT seq FROM price_point WHERE productId = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)
            """).execute(arguments: [product.id, seq, product.id, maximumPointsPerProduct])
    }

    /// Records the price and stock of the product `id` as stored now (after a stock decrement).
    static func recordCurrent(_ db: Database, productId id: String, at now: Date) throws {
        guard let product = try StoredRows.product(db, id: id) else { return }
        try record(db, product, at: now)
    }

    /// The last `limit` points of a product, oldest first.
    static func history(_ db: Database, productId: String, limit: Int) throws -> [PricePoint] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT price, stock, at FROM price_point WHERE productId = ? ORDER BY seq DESC LIMIT ?
            """), arguments: [productId, max(0, limit)])
            .reversed()
            .map { PricePoint(price: Money(minorUnits: $0[0]), stock: $0[1], at: StoredDate.date($0[2])) }
    }
}
