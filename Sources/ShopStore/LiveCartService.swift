import Foundation
import GRDB
import Shop

/// Each shopper's cart over the shop database (`cart_line` rows under the shopper's owner key). Every change
/// is one transaction that writes a change-log entry and returns the priced cart; the change is published
/// on the feed after it commits.
struct LiveCartService: CartService {
    let database: ShopDatabase
    let feed: ChangeFeed
    let now: @Sendable () -> Date

    func cart(of shopper: Shopper) async throws -> Cart {
        try await StorageError.mapping {
            try await database.writer.read { db in try StoredRows.cart(db, of: shopper) }
        }
    }

    func add(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        guard quantity >= 1 else { throw ShopError.invalidQuantity(quantity, minimum: 1) }
        let owner = shopper.storageKey
        return try await change(shopper, touching: productId) { db in
            // The product's limits and the line's units in one statement (read apart, they cost twice), with
            // what the cart shows of the line (so that it is not read back: see `WrittenLine`).
            guard let (limits, current, shown) = try DirectStatement(db, """
                SELECT p.name, p.stock, p.maxPerOrder, (SELECT quantity FROM cart_line WHERE owner = ? AND productId = p.id),
                    p.categoryId, p.price, k.taxRate
                FROM product p LEFT JOIN category k ON k.id = p.categoryId WHERE p.id = ?
                """).one([.text(owner), .text(productId)], { row in
                    (CartRules.StockLimits(productId: productId, name: row.text(0), stock: row.int(1), maxPerOrder: row.int(2)),
                     row.int(3), ShownLine(row, productId: productId, name: 0, categoryId: 4, price: 5, taxRate: 6))
                })
            else { throw ShopError.productNotFound(productId) }
            // Saturating: a quantity near Int.max is refused as above stock, not an arithmetic trap.
            let total = current.addingReportingOverflow(quantity)
            try CartRules.checkAvailability(of: limits, quantity: total.overflow ? .max : total.partialValue)
            try DirectStatement(db, """
                INSERT INTO cart_line (owner, productId, quantity) VALUES (?, ?, ?)
                ON CONFLICT (owner, productId) DO UPDATE SET quantity = quantity + excluded.quantity
                """).execute([.text(owner), .text(productId), .integer(Int64(quantity))])
            // The line now holds `total` (checked above, so it did not overflow); not `RETURNING quantity`,
            // which SQLite runs as a trigger program, dearer than the statement itself.
            return shown?.written(quantity: total.partialValue) ?? .unknown
        }
    }

    func setQuantity(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        guard quantity >= 0 else { throw ShopError.invalidQuantity(quantity, minimum: 0) }
        let owner = shopper.storageKey
        return try await change(shopper, touching: productId) { db in
            // Whether the line exists and its product's limits (nil when the product is gone), in one statement,
            // with what the cart shows of the line.
            let line = try DirectStatement(db, """
                SELECT p.id IS NOT NULL, p.name, p.stock, p.maxPerOrder, p.categoryId, p.price, k.taxRate
                FROM cart_line c LEFT JOIN product p ON p.id = c.productId LEFT JOIN category k ON k.id = p.categoryId
                WHERE c.owner = ? AND c.productId = ?
                """).one([.text(owner), .text(productId)]) { row -> (CartRules.StockLimits, ShownLine?)? in
                    guard row.int64(0) != 0 else { return nil }
                    return (CartRules.StockLimits(productId: productId, name: row.text(1), stock: row.int(2), maxPerOrder: row.int(3)),
                            ShownLine(row, productId: productId, name: 1, categoryId: 4, price: 5, taxRate: 6))
                }
            guard let line else { throw ShopError.notInCart(productId) }
            if quantity == 0 {
                try DirectStatement(db, "DELETE FROM cart_line WHERE owner = ? AND productId = ?").execute([.text(owner), .text(productId)])
                return .known(nil)
            }
            guard let (limits, shown) = line else { throw ShopError.productNotFound(productId) }
            try CartRules.checkAvailability(of: limits, quantity: quantity)
            try DirectStatement(db, "UPDATE cart_line SET quantity = ? WHERE owner = ? AND productId = ?")
                .execute([.integer(Int64(quantity)), .text(owner), .text(productId)])
            return shown?.written(quantity: quantity) ?? .unknown
        }
    }

    func remove(productId: String, for shopper: Shopper) async throws -> Cart {
        try await change(shopper, touching: productId) { db in
            try DirectStatement(db, "DELETE FROM cart_line WHERE owner = ? AND productId = ?").execute([.text(shopper.storageKey), .text(productId)])
            guard db.changesCount > 0 else { throw ShopError.notInCart(productId) }
            return .known(nil)
        }
    }

    func clear(for shopper: Shopper) async throws -> Cart {
        try await change(shopper, touching: nil) { db in
            try db.cachedStatement(sql: "DELETE FROM cart_line WHERE owner = ?").execute(arguments: [shopper.storageKey])
            return .unknown
        }
    }

    /// Runs a change atomically (in a savepoint of a group commit): bumps the cart revision, writes the
    /// change-log entry and the task's idempotency key, and publishes the new cart after the commit. A
    /// retry of a keyed change already stored applies nothing and returns the cart as it is.
    /// - Parameter touched: the one product whose line the change may alter (nil: any), so that the new
    ///   cart is derived from the one this process knows at the revision before (see ``CartCache``).
    private func change(
        _ shopper: Shopper, touching touched: String?, _ body: @escaping @Sendable (Database) throws -> WrittenLine
    ) async throws -> Cart {
        let key = IdempotencyKey.current
        let now = now()
        let cache = database.cartCache
        let commits = database.commits
        let (cart, seq) = try await StorageError.mapping {
            try await database.commits.write { db -> (PricedCart, Int64?) in
                if case .replay = try IdempotencyRecord.check(db, key) { return (try StoredRows.pricedCart(db, of: shopper), nil) }
                let written = try body(db)
                try StoredRows.bumpCartRevision(db, of: shopper)
                try IdempotencyRecord.record(db, key, at: now)
                let seq = try ChangeLog.append(db, .cart, shopper.storageKey, at: now)
                // Last: see `CartCache`.
                return (try cache.cart(db, of: shopper, touching: touched, written: written, in: commits), seq)
            }
        }
        let priced = cart.cart
        if let seq { await feed.committed(seq, [.cartChanged(priced, shopper: shopper)]) }
        return priced
    }
}

/// What the cart shows of a line besides its quantity, read with the product's limits by a change: its
/// product's name, category and price, and the category's tax rate (nil when the category is gone: such a
/// line is not shown, as the cart's own read joins the category, so the change leaves it to that read).
private struct ShownLine {
    let productId: String
    let name: String
    let categoryId: String
    let price: Int64
    let taxRate: Int

    init?(_ row: DirectStatement.Row, productId: String, name: Int32, categoryId: Int32, price: Int32, taxRate: Int32) {
        guard !row.isNull(taxRate) else { return nil }
        self.productId = productId
        self.name = row.text(name)
        self.categoryId = row.text(categoryId)
        self.price = row.int64(price)
        self.taxRate = row.int(taxRate)
    }

    /// The line with `quantity` units, as the cart shows it.
    func written(quantity: Int) -> WrittenLine {
        .known((CartLine(productId: productId, name: name, categoryId: categoryId, unitPrice: Money(minorUnits: price), quantity: quantity), taxRate))
    }
}
