import Foundation
import GRDB
import Shop

/// The `price_point` rows: a product's price history, written in the transaction that changes its price
/// or stock. Each product's count of points (`product.pricePoints`) is kept by the same write, so that
/// recording a point costs the same with a full history as with an empty one.
package enum PriceHistoryRows {
    /// The most points kept per product; older ones are deleted as new ones are written.
    package static let maximumPointsPerProduct = 1_000

    /// Records `product`'s price and stock as of `now`, and forgets its points beyond the last
    /// ``maximumPointsPerProduct``. When `sold` is not zero, the same write of the product's row takes `sold`
    /// off its stored stock (a checkout: one `UPDATE` of the row for its stock and its count of points, instead
    /// of one for each).
    static func record(_ db: Database, _ product: Product, at now: Date, sold: Int = 0) throws {
        // The count of points with this one, counted first: the row's page is written anyway. (Read after the
        // update, not by `RETURNING`, which SQLite runs as a trigger program: callgrind, 1.5–2 % more per checkout.)
        if sold == 0 {
            try DirectStatement(db, "UPDATE product SET pricePoints = pricePoints + 1 WHERE id = ?").execute([.text(product.id)])
        } else {
            try DirectStatement(db, "UPDATE product SET stock = stock - ?, pricePoints = pricePoints + 1 WHERE id = ?")
                .execute([.integer(Int64(sold)), .text(product.id)])
        }
        let counted = try DirectStatement(db, "SELECT pricePoints FROM product WHERE id = ?").one([.text(product.id)]) { $0.int(0) }
        try DirectStatement(db, "INSERT INTO price_point (productId, price, stock, at) VALUES (?, ?, ?, ?)")
            .execute([.text(product.id), .integer(product.price.minorUnits), .integer(Int64(product.stock)),
                      .integer(StoredDate.milliseconds(now))])
        guard let points = counted, points > maximumPointsPerProduct else { return }
        // The oldest beyond the bound, found from the old end: a walk of as many points as go (usually one).
        try DirectStatement(db, """
            DELETE FROM price_point WHERE productId = ? AND seq <= (
                SELECT seq FROM price_point WHERE productId = ? ORDER BY seq LIMIT 1 OFFSET ?)
            """).execute([.text(product.id), .text(product.id), .integer(Int64(points - maximumPointsPerProduct - 1))])
        // What was deleted, as on PostgreSQL.
        try DirectStatement(db, "UPDATE product SET pricePoints = pricePoints - ? WHERE id = ?")
            .execute([.integer(Int64(db.changesCount)), .text(product.id)])
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
