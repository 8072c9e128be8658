import Foundation
import GRDB
import Shop

/// The cart over the shop database. Every change is one transaction that writes a change-log entry and
/// returns the priced cart; the change is published on the feed after it commits.
struct LiveCartService: CartService {
    let database: ShopDatabase
    let feed: ChangeFeed
    let now: @Sendable () -> Date

    func cart() async throws -> Cart {
        try await StorageError.mapping {
            try await database.writer.read { db in try StoredRows.cart(db) }
        }
    }

    func add(productId: String, quantity: Int) async throws -> Cart {
        guard quantity >= 1 else { throw ShopError.invalidQuantity(quantity, minimum: 1) }
        return try await change { db in
            guard let product = try StoredRows.product(db, id: productId) else {
                throw ShopError.productNotFound(productId)
            }
            let current = try Int.fetchOne(
                db.cachedStatement(sql: "SELECT quantity FROM cart_line WHERE productId = ?"), arguments: [productId]) ?? 0
            // Saturating: a quantity near Int.max is refused as above stock, not an arithmetic trap.
            let total = current.addingReportingOverflow(quantity)
            try Self.checkAvailability(of: product, quantity: total.overflow ? .max : total.partialValue)
            try db.cachedStatement(sql: """
                INSERT INTO cart_line (productId, quantity) VALUES (?, ?)
                ON CONFLICT (productId) DO UPDATE SET quantity = quantity + excluded.quantity
                """).execute(arguments: [productId, quantity])
        }
    }

    func setQuantity(productId: String, quantity: Int) async throws -> Cart {
        guard quantity >= 0 else { throw ShopError.invalidQuantity(quantity, minimum: 0) }
        return try await change { db in
            guard try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM cart_line WHERE productId = ?)"), arguments: [productId]) == true
            else { throw ShopError.notInCart(productId) }
            if quantity == 0 {
                try db.execute(sql: "DELETE FROM cart_line WHERE productId = ?", arguments: [productId])
                return
            }
            guard let product = try StoredRows.product(db, id: productId) else {
                throw ShopError.productNotFound(productId)
            }
            try Self.checkAvailability(of: product, quantity: quantity)
            try db.cachedStatement(sql: "UPDATE cart_line SET quantity = ? WHERE productId = ?").execute(arguments: [quantity, productId])
        }
    }

    func remove(productId: String) async throws -> Cart {
        try await change { db in
            try db.execute(sql: "DELETE FROM cart_line WHERE productId = ?", arguments: [productId])
            guard db.changesCount > 0 else { throw ShopError.notInCart(productId) }
        }
    }

    func clear() async throws -> Cart {
        try await change { db in
            try db.execute(sql: "DELETE FROM cart_line")
        }
    }

    /// Runs a change atomically (in a savepoint of a group commit): bumps the cart revision, writes the
    /// change-log entry and the task's idempotency key, and publishes the new cart after the commit. A
    /// retry of a keyed change already stored applies nothing and returns the cart as it is.
    private func change(_ body: @escaping @Sendable (Database) throws -> Void) async throws -> Cart {
        let key = IdempotencyKey.current
        let now = now()
        let (cart, seq) = try await StorageError.mapping {
            try await database.commits.write { db -> (Cart, Int64?) in
                if case .replay = try IdempotencyRecord.check(db, key) { return (try StoredRows.cart(db), nil) }
                try body(db)
                try StoredRows.bumpCartRevision(db)
                try IdempotencyRecord.record(db, key, at: now)
                return (try StoredRows.cart(db), try ChangeLog.append(db, .cart, at: now))
            }
        }
        if let seq { await feed.committed(seq, [.cartChanged(cart)]) }
        return cart
    }

    /// Refuses a quantity the product cannot supply: out of stock, more than in stock, more than allowed per order.
    static func checkAvailability(of product: Product, quantity: Int) throws {
        if product.stock == 0 { throw ShopError.outOfStock(product.id, name: product.name) }
        if quantity > product.stock {
            throw ShopError.quantityExceedsStock(product.id, name: product.name, requested: quantity, available: product.stock)
        }
        if quantity > product.maxPerOrder {
            throw ShopError.quantityExceedsMaximum(product.id, name: product.name, requested: quantity, maximum: product.maxPerOrder)
        }
    }
}
