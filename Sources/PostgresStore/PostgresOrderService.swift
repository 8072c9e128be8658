import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Orders over PostgreSQL: placing the cart as an order in one transaction, and the orders placed.
///
/// **Why row locks, not `SERIALIZABLE`.** A checkout reads the stock of the products it buys and writes
/// it lower. Under `READ COMMITTED` it first locks the cart (its revision row) and then those product rows
/// (`SELECT … FOR NO KEY UPDATE`, in id order so that two checkouts never wait for each other in a cycle;
/// "no key": the lock a stock update takes, which lets cart adds keep the product from deletion meanwhile); a
/// concurrent checkout of the same products, from any server, waits for the lock and then reads the stock
/// the first one left. No checkout can sell what another already sold, and none fails merely for having
/// run beside another: under `SERIALIZABLE`, concurrent checkouts of one popular product would abort
/// with serialization failures and have to be retried, more often the busier the product. The
/// `CHECK (stock >= 0)` on the table is the last guard. The answer is sent only after `COMMIT` returned.
struct PostgresOrderService: OrderService {
    let database: PostgresShopDatabase
    let feed: ChangeFeed
    let now: @Sendable () -> Date

    func recentOrders(limit: Int, of shopper: Shopper) async throws -> [Order] {
        try await database.snapshot { session in try await PostgresRows.orders(session, of: shopper, limit: max(limit, 0)) }
    }

    func placeOrder(expectedRevision: Int64?, for shopper: Shopper) async throws -> Order {
        // Orders are an account's: a guest's cart is never checked out, whatever the caller checked.
        guard shopper.accountId != nil else { throw ShopError.signInRequired("check out") }
        let owner = shopper.storageKey
        let key = IdempotencyKey.current
        let now = now()
        let createdAt = StoredDate.date(StoredDate.milliseconds(now))
        let (order, entries) = try await database.write { session -> (Order, PostgresInboxRows.Entries) in
            if case .replay(let outcome) = try await PostgresIdempotency.check(session, key),
               let id = outcome["orderId"], let (order, orderShopper) = try await PostgresRows.order(session, id: id), orderShopper == shopper {
                return (order, [])
            }
            // The cart's lock: no change of this cart, from any server, between reading it and emptying it.
            let revision = try await session.value("SELECT revision FROM cart_revision WHERE owner = \(owner) FOR UPDATE", as: Int64.self) ?? 0
            if let expectedRevision, revision != expectedRevision { throw ShopError.cartChanged(revision: revision) }
            let cart = try await PostgresRows.cart(session, of: shopper)
            guard !cart.isEmpty else { throw ShopError.emptyCart }
            // The products' locks, then their stock as it is now.
            let ids = Array(Set(cart.lines.map(\.productId))).sorted()
            let locked = try await PostgresRows.products(session, """
                SELECT \(unescaped: PostgresRows.productColumns) FROM product p WHERE p.id = ANY(\(ids)) ORDER BY p.id FOR NO KEY UPDATE
                """)
            let products = Dictionary(uniqueKeysWithValues: locked.map { ($0.id, $0) })
            for line in cart.lines {
                guard let product = products[line.productId] else { throw ShopError.productNotFound(line.productId) }
                try CartRules.checkAvailability(of: product, quantity: line.quantity)
            }
            guard let seq = try await session.value("SELECT nextval(pg_get_serial_sequence('customer_order', 'seq'))", as: Int64.self)
            else { throw ShopError(reason: ShopError.Reason.storageFailed, message: "No order number was given.") }
            let order = Order(
                id: Identifiers.order(Int(seq)), createdAt: createdAt,
                lines: cart.lines.map { OrderLine(productId: $0.productId, name: $0.name, unitPrice: $0.unitPrice, quantity: $0.quantity) },
                subtotal: cart.subtotal, tax: cart.tax, total: cart.total)
            try await session.execute("""
                INSERT INTO customer_order (seq, id, createdAt, subtotal, tax, total, owner)
                VALUES (\(seq), \(order.id), \(StoredDate.milliseconds(createdAt)), \(order.subtotal.minorUnits), \(order.tax.minorUnits),
                        \(order.total.minorUnits), \(owner))
                """)
            for (position, line) in order.lines.enumerated() {
                try await session.execute("""
                    INSERT INTO order_line (orderId, position, productId, name, unitPrice, quantity)
                    VALUES (\(order.id), \(position), \(line.productId), \(line.name), \(line.unitPrice.minorUnits), \(Int64(line.quantity)))
                    """)
                try await session.execute("UPDATE product SET stock = stock - \(Int64(line.quantity)) WHERE id = \(line.productId)")
            }
            // The stock of each product bought changed: its history shows it (one point per product), from the
            // locked row less the quantity bought (a cart has one line per product): no read back.
            let bought = Dictionary(cart.lines.map { ($0.productId, $0.quantity) }, uniquingKeysWith: +)
            for var product in locked {
                product.stock -= bought[product.id] ?? 0
                try await PostgresPriceHistory.record(session, product, at: now)
            }
            try await session.execute("DELETE FROM cart_line WHERE owner = \(owner)")
            // The emptied cart is known without reading it back (one round trip less under the products' locks).
            let emptied = Cart(lines: [], tax: .zero, revision: try await PostgresRows.bumpCartRevision(session, of: shopper))
            try await PostgresIdempotency.record(session, key, outcome: ["orderId": order.id], at: now)
            var entries: PostgresInboxRows.Entries = [
                (try await PostgresChangeLog.append(session, .cart, owner, at: now), [.cartChanged(emptied, shopper: shopper)]),
            ]
            entries.append((try await PostgresChangeLog.append(session, .order, order.id, at: now), [.orderPlaced(order, shopper: shopper)]))
            entries += try await PostgresInboxRows.orderPlaced(session, order: order, owner: shopper, at: now)
            return (order, entries)
        }
        // Entries for the emptied cart, the order and its notification; all published, in log order.
        await feed.committed(entries)
        return order
    }
}
