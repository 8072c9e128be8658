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
            guard let (product, current) = try DirectStatement(db, Self.addReadSQL).one([.text(owner), .text(productId)], { row in
                (TouchedProduct(row, productId: productId), row.int(TouchedProduct.columnCount))
            })
            else { throw ShopError.productNotFound(productId) }
            // Saturating: a quantity near Int.max is refused as above stock, not an arithmetic trap.
            let total = current.addingReportingOverflow(quantity)
            try CartRules.checkAvailability(of: product.limits, quantity: total.overflow ? .max : total.partialValue)
            try DirectStatement(db, Self.addSQL).execute([.text(owner), .text(productId), .integer(Int64(quantity))])
            // The line now holds `total` (checked above, so it did not overflow); not `RETURNING quantity`,
            // which SQLite runs as a trigger program, dearer than the statement itself.
            return product.written(quantity: total.partialValue)
        }
    }

    func setQuantity(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        guard quantity >= 0 else { throw ShopError.invalidQuantity(quantity, minimum: 0) }
        let owner = shopper.storageKey
        return try await change(shopper, touching: productId) { db in
            // Whether the line exists and its product as a change reads it (nil when the product is gone), in one
            // statement.
            let line = try DirectStatement(db, Self.setQuantityReadSQL).one([.text(owner), .text(productId)]) { row in
                row.int64(TouchedProduct.columnCount) != 0 ? TouchedProduct(row, productId: productId) : nil
            }
            guard let line else { throw ShopError.notInCart(productId) }
            if quantity == 0 {
                try DirectStatement(db, Self.removeSQL).execute([.text(owner), .text(productId)])
                return .known(nil)
            }
            guard let product = line else { throw ShopError.productNotFound(productId) }
            try CartRules.checkAvailability(of: product.limits, quantity: quantity)
            try DirectStatement(db, Self.setQuantitySQL).execute([.integer(Int64(quantity)), .text(owner), .text(productId)])
            return product.written(quantity: quantity)
        }
    }

    /// What an add reads: the product, then the units of its line in the cart (NULL: none).
    private static let addReadSQL = StatementSQL("""
        SELECT \(TouchedProduct.columns), (SELECT quantity FROM cart_line WHERE owner = ? AND productId = p.id)
        FROM product p LEFT JOIN category k ON k.id = p.categoryId WHERE p.id = ?
        """)
    private static let addSQL = StatementSQL("""
        INSERT INTO cart_line (owner, productId, quantity) VALUES (?, ?, ?)
        ON CONFLICT (owner, productId) DO UPDATE SET quantity = quantity + excluded.quantity
        """)

    /// What a quantity change reads: the line's product (NULLs when it is gone), then whether it is there.
    private static let setQuantityReadSQL = StatementSQL("""
        SELECT \(TouchedProduct.columns), p.id IS NOT NULL
        FROM cart_line c LEFT JOIN product p ON p.id = c.productId LEFT JOIN category k ON k.id = p.categoryId
        WHERE c.owner = ? AND c.productId = ?
        """)
    private static let setQuantitySQL = StatementSQL("UPDATE cart_line SET quantity = ? WHERE owner = ? AND productId = ?")
    private static let removeSQL = StatementSQL("DELETE FROM cart_line WHERE owner = ? AND productId = ?")
    private static let clearSQL = StatementSQL("DELETE FROM cart_line WHERE owner = ?")

    func remove(productId: String, for shopper: Shopper) async throws -> Cart {
        try await change(shopper, touching: productId) { db in
            try DirectStatement(db, Self.removeSQL).execute([.text(shopper.storageKey), .text(productId)])
            guard db.changesCount > 0 else { throw ShopError.notInCart(productId) }
            return .known(nil)
        }
    }

    func clear(for shopper: Shopper) async throws -> Cart {
        try await change(shopper, touching: nil) { db in
            try DirectStatement(db, Self.clearSQL).execute([.text(shopper.storageKey)])
            return .unknown
        }
    }

    /// Runs a change atomically (in a savepoint of a group commit): checks that the session it is made for is
    /// live (``SessionCheck``), bumps the cart revision, writes the change-log entry and the task's idempotency
    /// key, and publishes the new cart after the commit. A retry of a keyed change already stored applies
    /// nothing and returns the cart as it is.
    /// - Parameter touched: the one product whose line the change may alter (nil: any), so that the new
    ///   cart is derived from the one this process knows at the revision before (see ``CartCache``).
    private func change(
        _ shopper: Shopper, touching touched: String?, _ body: @escaping @Sendable (Database) throws -> WrittenLine
    ) async throws -> Cart {
        let key = IdempotencyKey.current
        let sessionId = WritingSession.id
        let now = now()
        let cache = database.cartCache
        let commits = database.commits
        let (cart, seq) = try await StorageError.mapping {
            try await database.commits.write { db -> (PricedCart, Int64?) in
                try SessionCheck.requireLive(db, sessionId, at: now)
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

/// What a cart change reads of the product whose line it touches, in the first columns of its statement
/// (``columns``): the stock limits the new quantity is checked against, and what the cart shows of the line
/// besides its quantity: the product's name, category and price, and the category's tax rate.
private struct TouchedProduct {
    /// The columns `init` reads, in order (the product aliased `p`, its category `k`, left-joined); a
    /// statement's own columns follow, from ``columnCount``.
    static let columns = "p.name, p.stock, p.maxPerOrder, p.categoryId, p.price, k.taxRate"
    /// How many ``columns`` there are.
    static let columnCount: Int32 = 6

    let limits: CartRules.StockLimits
    let categoryId: String
    let price: Int64
    /// Nil when the category is gone: such a line is not shown, as the cart's own read joins the category, so
    /// the change leaves it to that read.
    let taxRate: Int?

    init(_ row: DirectStatement.Row, productId: String) {
        limits = CartRules.StockLimits(productId: productId, name: row.text(0), stock: row.int(1), maxPerOrder: row.int(2))
        categoryId = row.text(3)
        price = row.int64(4)
        taxRate = row.isNull(5) ? nil : row.int(5)
    }

    /// The line with `quantity` units, as the cart shows it (unknown when the category is gone).
    func written(quantity: Int) -> WrittenLine {
        guard let taxRate else { return .unknown }
        let line = CartLine(
            productId: limits.productId, name: limits.name, categoryId: categoryId, unitPrice: Money(minorUnits: price), quantity: quantity)
        return .known((line, taxRate))
    }
}
