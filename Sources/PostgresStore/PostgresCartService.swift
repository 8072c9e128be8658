import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Each shopper's cart over PostgreSQL. A change is one transaction that first bumps the cart's revision
/// (its row lock orders concurrent changes of one cart, from any server), reads the cart with the line it
/// touches, checks the line, and stores it with the idempotency key and the change-log entry in one
/// statement; the new cart, derived from the one read, is published on the feed after the commit, before the
/// call returns.
///
/// A change made for a signed-in session (``WritingSession``) checks in its bump that the session is live
/// (``PostgresSessionCheck``), in the same round trip.
///
/// Round trips: `BEGIN`, the bump, the read, the write, `COMMIT` (a clear reads nothing). Each is a wait for
/// the server, which is what a change costs here; the statements are arranged for fewer of them, not for
/// less work in each. The read cannot join the bump: a statement sees the snapshot it started with, so a
/// read in the statement that waited for another change's lock would not see that change.
struct PostgresCartService: CartService {
    let database: PostgresShopDatabase
    let feed: ChangeFeed
    let now: @Sendable () -> Date

    func cart(of shopper: Shopper) async throws -> Cart {
        // One statement: its own snapshot.
        try await database.read { session in try await PostgresRows.cart(session, of: shopper) }
    }

    func add(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        guard quantity >= 1 else { throw ShopError.invalidQuantity(quantity, minimum: 1) }
        return try await change(shopper, touching: productId, keepingProduct: true) { touched, statement in
            guard let product = touched.product else { throw ShopError.productNotFound(productId) }
            // Saturating: a quantity near Int.max is refused as above stock, not an arithmetic trap.
            let total = (touched.quantity ?? 0).addingReportingOverflow(quantity)
            try CartRules.checkAvailability(of: product.limits, quantity: total.overflow ? .max : total.partialValue)
            let values = [try statement.bind(shopper.storageKey), try statement.bind(productId), try statement.bind(Int64(quantity))]
            statement.change("line", """
                INSERT INTO cart_line (owner, productId, quantity) VALUES (\(values.joined(separator: ", ")))
                ON CONFLICT (owner, productId) DO UPDATE SET quantity = cart_line.quantity + excluded.quantity
                """)
            return product.line(quantity: total.partialValue)
        }
    }

    func setQuantity(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        guard quantity >= 0 else { throw ShopError.invalidQuantity(quantity, minimum: 0) }
        return try await change(shopper, touching: productId, keepingProduct: quantity > 0) { touched, statement in
            // A line exists only while its product does (the foreign key cascades).
            guard touched.quantity != nil, let product = touched.product else { throw ShopError.notInCart(productId) }
            let owner = try statement.bind(shopper.storageKey)
            let id = try statement.bind(productId)
            if quantity == 0 {
                statement.change("line", "DELETE FROM cart_line WHERE owner = \(owner) AND productId = \(id)")
                return nil
            }
            try CartRules.checkAvailability(of: product.limits, quantity: quantity)
            let units = try statement.bind(Int64(quantity))
            statement.change("line", "UPDATE cart_line SET quantity = \(units) WHERE owner = \(owner) AND productId = \(id)")
            return product.line(quantity: quantity)
        }
    }

    func remove(productId: String, for shopper: Shopper) async throws -> Cart {
        try await change(shopper, touching: productId, keepingProduct: false) { touched, statement in
            guard touched.quantity != nil else { throw ShopError.notInCart(productId) }
            let owner = try statement.bind(shopper.storageKey)
            let id = try statement.bind(productId)
            statement.change("line", "DELETE FROM cart_line WHERE owner = \(owner) AND productId = \(id)")
            return nil
        }
    }

    func clear(for shopper: Shopper) async throws -> Cart {
        try await change(shopper, touching: nil) { _, statement in
            let owner = try statement.bind(shopper.storageKey)
            statement.change("line", "DELETE FROM cart_line WHERE owner = \(owner)")
            return nil
        }
    }

    /// Runs a change atomically: checks that the session it is made for is live and takes the cart's lock (by
    /// bumping its revision; both in one statement, ``SessionBump``), reads the cart and the line of
    /// `touched` (nil: the change empties the cart, reading nothing; its product kept from deletion when
    /// `keepingProduct`, see ``read``), lets `body` check it and add its statement,
    /// then stores that with the idempotency key and the change-log entry, and publishes the new cart after the
    /// commit. `body` returns the touched line as it is after the change, as the cart shows it (nil: not shown). A
    /// retry of a keyed change already stored applies nothing and returns the cart as it is.
    private func change(
        _ shopper: Shopper, touching touched: String?, keepingProduct: Bool = false,
        _ body: @escaping @Sendable (TouchedLine, inout PostgresStatement) throws -> (line: CartLine, taxRate: Int)?
    ) async throws -> Cart {
        let key = IdempotencyKey.current
        let sessionId = WritingSession.id
        let now = now()
        let owner = shopper.storageKey
        let (cart, seq) = try await database.write { session -> (Cart, Int64?) in
            if case .replay = try await PostgresIdempotency.check(session, key) {
                try await PostgresSessionCheck.requireLive(session, sessionId, at: now)
                return (try await PostgresRows.cart(session, of: shopper), nil)
            }
            let revision: Int64
            if let sessionId {
                let bump = SessionBump(owner: owner, sessionId: sessionId, now: StoredDate.milliseconds(now))
                guard let bumped = try await session.value(bump, as: Int64.self) else { throw ShopError.sessionEnded }
                revision = bumped
            } else {
                revision = try await PostgresRows.bumpCartRevision(session, of: shopper)
            }
            var statement = PostgresStatement()
            let cart: Cart
            if let touched {
                let (before, line) = try await Self.read(session, owner: owner, touching: touched, keepingProduct: keepingProduct, revision: revision)
                let after = try body(line, &statement)
                cart = before.replacingLine(of: touched, with: after, revision: revision).cart
            } else {
                _ = try body(TouchedLine(product: nil, quantity: nil), &statement)
                cart = Cart(lines: [], tax: .zero, revision: revision)
            }
            try PostgresIdempotency.record(key, at: now, in: &statement)
            let seq = try await PostgresChangeLog.append(session, [(.cart, owner)], at: now, after: statement)[0]
            return (cart, seq)
        }
        if let seq { await feed.committed(seq, [.cartChanged(cart, shopper: shopper)]) }
        return cart
    }

    /// The bump of a change made for a signed-in session, prepared: the cart's revision as `PostgresRows`' bump
    /// does it, only when the session is live (no row when it is not: nothing bumped).
    private struct SessionBump: PostgresPreparedQuery {
        static let name = "storefront_session_bump_cart_revision"
        static let sql = """
            INSERT INTO cart_revision (owner, revision) SELECT $1, 1 WHERE \(PostgresSessionCheck.liveCondition(id: "$2", now: "$3"))
            ON CONFLICT (owner) DO UPDATE SET revision = cart_revision.revision + 1
            RETURNING revision
            """
        let owner: String
        let sessionId: String
        let now: Int64
        func makeBindings() throws -> PostgresBindings { try .values(owner, sessionId, now) }
    }

    /// The cart as the transaction sees it (after its lock), and the line of `productId` with its product, kept
    /// from deletion until the transaction ends when `keepingProduct` (`FOR KEY SHARE`: price and stock changes
    /// still go through): a line written for it cannot then fail on its foreign key because another server deleted
    /// the product meanwhile (the change reports it missing instead). One statement: the touched product's row
    /// first, then the cart's lines in the order they were added.
    private static func read(
        _ session: PostgresSession, owner: String, touching productId: String, keepingProduct: Bool, revision: Int64
    ) async throws -> (PricedCart, TouchedLine) {
        let rows = keepingProduct
            ? try await session.rows(TouchingRead(owner: owner, productId: productId))
            : try await session.rows(TouchingReadUnlocked(owner: owner, productId: productId))
        var cart = PricedCart(lines: [], taxRates: [], revision: revision)
        var touched = TouchedLine(product: nil, quantity: nil)
        for row in rows {
            let (isTouched, id, name, categoryId, price, quantity, taxRate, stock, maxPerOrder, _) =
                try row.decode((Bool, String, String, String, Int64, Int?, Int?, Int, Int, Int64).self)
            if isTouched {
                touched = TouchedLine(
                    product: TouchedProduct(
                        limits: CartRules.StockLimits(productId: id, name: name, stock: stock, maxPerOrder: maxPerOrder),
                        categoryId: categoryId, price: price, taxRate: taxRate),
                    quantity: quantity)
            } else if let quantity, let taxRate {
                cart.lines.append(CartLine(productId: id, name: name, categoryId: categoryId, unitPrice: Money(minorUnits: price), quantity: quantity))
                cart.taxRates.append(taxRate)
            }
        }
        return (cart, touched)
    }
}

/// The read of a change (see `PostgresCartService.read`), prepared: on every cart change's path. The touched
/// product is kept from deletion (`FOR KEY SHARE`) when the change writes a line for it.
private struct TouchingRead: PostgresPreparedQuery {
    static let name = "storefront_cart_change_read"
    static let sql = touchingReadSQL(lockingProduct: true)
    let owner: String
    let productId: String
    func makeBindings() throws -> PostgresBindings { try .values(owner, productId) }
}

/// ``TouchingRead`` for a change that only deletes the line (a removal, a quantity of 0): nothing to keep, and a
/// lock it would wait for while holding the cart's (a deletion of the product locks it, then the carts).
private struct TouchingReadUnlocked: PostgresPreparedQuery {
    static let name = "storefront_cart_change_read_unlocked"
    static let sql = touchingReadSQL(lockingProduct: false)
    let owner: String
    let productId: String
    func makeBindings() throws -> PostgresBindings { try .values(owner, productId) }
}

/// The text of ``TouchingRead`` and ``TouchingReadUnlocked``: the touched product's row and line first, then the
/// cart's lines in the order they were added.
private func touchingReadSQL(lockingProduct: Bool) -> String {
    """
    WITH touched AS (
        SELECT p.name, p.categoryId, p.price, k.taxRate, p.stock, p.maxPerOrder,
               (SELECT quantity FROM cart_line WHERE owner = $1 AND productId = p.id) AS quantity
        FROM product p LEFT JOIN category k ON k.id = p.categoryId
        WHERE p.id = $2\(lockingProduct ? " FOR KEY SHARE OF p" : ""))
    SELECT true, $2, name, categoryId, price, quantity, taxRate, stock, maxPerOrder, 0::bigint FROM touched
    UNION ALL
    SELECT false, c.productId, p.name, p.categoryId, p.price, c.quantity, k.taxRate, 0, 0, c.seq
    FROM cart_line c JOIN product p ON p.id = c.productId JOIN category k ON k.id = p.categoryId
    WHERE c.owner = $1
    ORDER BY 1 DESC, 10
    """
}

/// What a cart change reads of the line it touches: its product (nil when there is none) and its units (nil
/// when the cart has no such line).
private struct TouchedLine: Sendable {
    let product: TouchedProduct?
    let quantity: Int?
}

/// What a cart change reads of the product whose line it touches: the limits the new quantity is checked
/// against, and what the cart shows of the line besides its units.
private struct TouchedProduct: Sendable {
    let limits: CartRules.StockLimits
    let categoryId: String
    let price: Int64
    /// Nil when the category is gone: the cart's read joins the category, so such a line is not shown.
    let taxRate: Int?

    /// The line with `quantity` units, as the cart shows it (nil when it is not shown).
    func line(quantity: Int) -> (line: CartLine, taxRate: Int)? {
        guard let taxRate else { return nil }
        return (CartLine(productId: limits.productId, name: limits.name, categoryId: categoryId, unitPrice: Money(minorUnits: price), quantity: quantity),
                taxRate)
    }
}
