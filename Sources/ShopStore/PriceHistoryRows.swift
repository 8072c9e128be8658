import Foundation
import GRDB
import Shop

/// The `price_point` rows: a product's price history, written in the transaction that changes its price
/// or stock. Each product's count of points (`product.pricePoints`) is kept by the same write, so that
/// recording a point costs the same with a full history as with an empty one.
package enum PriceHistoryRows {
    /// The most points kept per product; older ones are deleted as new ones are written.
    package static let maximumPointsPerProduct = 1_000

    // The statements of `record` (compiled once per connection and kept: `StatementSQL`).
    private static let pointsSQL = StatementSQL("SELECT pricePoints FROM product WHERE id = ?")
    private static let forgetSQL = StatementSQL("""
        DELETE FROM price_point WHERE productId = ? AND seq <= (
            SELECT seq FROM price_point WHERE productId = ? ORDER BY seq LIMIT 1 OFFSET ?)
        """)
    private static let countOneSQL = StatementSQL("UPDATE product SET stock = stock - ?, pricePoints = pricePoints + 1 WHERE id = ?")
    private static let countSQL = StatementSQL("UPDATE product SET stock = stock - ?, pricePoints = pricePoints + ? WHERE id = ?")
    private static let insertSQL = StatementSQL("INSERT INTO price_point (productId, price, stock, at) VALUES (?, ?, ?, ?)")

    /// Records `product`'s price and stock as of `now`, and forgets its points beyond the last
    /// ``maximumPointsPerProduct``. The same write of the product's row counts the point and takes `sold` off its
    /// stored stock (a checkout: one `UPDATE` of the row for both, instead of one for each).
    static func record(_ db: Database, _ product: Product, at now: Date, sold: Int = 0) throws {
        let points = try DirectStatement(db, Self.pointsSQL).one([.text(product.id)]) { $0.int(0) } ?? 0
        // Room for this one first: the oldest beyond the bound go, found from the old end (a walk of as many
        // points as go: usually one, in a history that is full). The count then changes once, by what it nets.
        var forgotten = 0
        if points >= maximumPointsPerProduct {
            try DirectStatement(db, Self.forgetSQL)
                .execute([.text(product.id), .text(product.id), .integer(Int64(points - maximumPointsPerProduct))])
            forgotten = db.changesCount  // what was deleted, as on PostgreSQL
        }
        // Not `RETURNING` the count instead of the read above: SQLite runs a RETURNING clause as a trigger
        // program, and callgrind put that at 1.5–2 % more per checkout.
        // The count's step a constant where it is 1 (the common case): callgrind put a bound step at 0.6 % more
        // per checkout.
        if forgotten == 0 {
            try DirectStatement(db, Self.countOneSQL).execute([.integer(Int64(sold)), .text(product.id)])
        } else {
            try DirectStatement(db, Self.countSQL).execute([.integer(Int64(sold)), .integer(Int64(1 - forgotten)), .text(product.id)])
        }
        try DirectStatement(db, Self.insertSQL).execute([
            .text(product.id), .integer(product.price.minorUnits), .integer(Int64(product.stock)), .integer(StoredDate.milliseconds(now)),
        ])
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
