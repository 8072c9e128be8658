import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Each shopper's cart over PostgreSQL. A change is one transaction that first bumps the cart's revision
/// (its row lock orders concurrent changes of one cart, from any server), checks and stores the line,
/// records the idempotency key and writes the change-log entry; the new cart is published on the feed after
/// the commit, before the call returns.
struct PostgresCartService: CartService {
    let database: PostgresShopDatabase
    let feed: ChangeFeed
    let now: @Sendable () -> Date

    func cart(of shopper: Shopper) async throws -> Cart {
        try await database.snapshot { session in try await PostgresRows.cart(session, of: shopper) }
    }

    func add(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        guard quantity >= 1 else { throw ShopError.invalidQuantity(quantity, minimum: 1) }
        let owner = shopper.storageKey
        return try await change(shopper) { session in
            guard let product = try await PostgresRows.productKeptFromDeletion(session, id: productId) else { throw ShopError.productNotFound(productId) }
            let current = try await session.value(
                "SELECT quantity FROM cart_line WHERE owner = \(owner) AND productId = \(productId)", as: Int.self) ?? 0
            // Saturating: a quantity near Int.max is refused as above stock, not an arithmetic trap.
            let total = current.addingReportingOverflow(quantity)
            try CartRules.checkAvailability(of: product, quantity: total.overflow ? .max : total.partialValue)
            try await session.execute("""
                INSERT INTO cart_line (owner, productId, quantity) VALUES (\(owner), \(productId), \(Int64(quantity)))
                ON CONFLICT (owner, productId) DO UPDATE SET quantity = cart_line.quantity + excluded.quantity
                """)
        }
    }

    func setQuantity(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        guard quantity >= 0 else { throw ShopError.invalidQuantity(quantity, minimum: 0) }
        let owner = shopper.storageKey
        return try await change(shopper) { session in
            guard try await session.execute("SELECT 1 FROM cart_line WHERE owner = \(owner) AND productId = \(productId)") > 0
            else { throw ShopError.notInCart(productId) }
            if quantity == 0 {
                try await session.execute("DELETE FROM cart_line WHERE owner = \(owner) AND productId = \(productId)")
                return
            }
            guard let product = try await PostgresRows.productKeptFromDeletion(session, id: productId) else { throw ShopError.productNotFound(productId) }
            try CartRules.checkAvailability(of: product, quantity: quantity)
            try await session.execute("UPDATE cart_line SET quantity = \(Int64(quantity)) WHERE owner = \(owner) AND productId = \(productId)")
        }
    }

    func remove(productId: String, for shopper: Shopper) async throws -> Cart {
        try await change(shopper) { session in
            let removed = try await session.execute(
                "DELETE FROM cart_line WHERE owner = \(shopper.storageKey) AND productId = \(productId) RETURNING 1")
            guard removed > 0 else { throw ShopError.notInCart(productId) }
        }
    }

    func clear(for shopper: Shopper) async throws -> Cart {
        try await change(shopper) { session in
            try await session.execute("DELETE FROM cart_line WHERE owner = \(shopper.storageKey)")
        }
    }

    /// Runs a change atomically: takes the cart's lock (by bumping its revision), applies `body`, records the
    /// idempotency key and the change-log entry, and publishes the new cart after the commit. A retry of a
    /// keyed change already stored applies nothing and returns the cart as it is.
    private func change(_ shopper: Shopper, _ body: @escaping @Sendable (PostgresSession) async throws -> Void) async throws -> Cart {
        let key = IdempotencyKey.current
        let now = now()
        let (cart, seq) = try await database.write { session -> (Cart, Int64?) in
            if case .replay = try await PostgresIdempotency.check(session, key) {
                return (try await PostgresRows.cart(session, of: shopper), nil)
            }
            try await PostgresRows.bumpCartRevision(session, of: shopper)
            try await body(session)
            try await PostgresIdempotency.record(session, key, at: now)
            let seq = try await PostgresChangeLog.append(session, .cart, shopper.storageKey, at: now)
            return (try await PostgresRows.cart(session, of: shopper), seq)
        }
        if let seq { await feed.committed(seq, [.cartChanged(cart, shopper: shopper)]) }
        return cart
    }
}
