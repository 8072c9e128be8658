import Foundation
import GRDB
import Shop

/// Orders over the shop database: placing the cart as an order in one transaction, and the orders placed.
/// Placing writes change-log entries for the emptied cart, the order and the account's notification of it
/// (see ``InboxRows/orderPlaced(_:order:owner:at:)``), and publishes them after the commit.
struct LiveOrderService: OrderService {
    let database: ShopDatabase
    let feed: ChangeFeed
    let now: @Sendable () -> Date

    // The statements of a checkout (compiled once per connection and kept: `StatementSQL`).
    private static let insertOrderSQL = StatementSQL("""
        INSERT INTO customer_order (seq, id, createdAt, subtotal, tax, total, owner) VALUES (?, ?, ?, ?, ?, ?, ?)
        """)
    private static let insertLineSQL = StatementSQL("""
        INSERT INTO order_line (orderId, position, productId, name, unitPrice, quantity) VALUES (?, ?, ?, ?, ?, ?)
        """)
    private static let emptyCartSQL = StatementSQL("DELETE FROM cart_line WHERE owner = ?")

    func recentOrders(limit: Int, of shopper: Shopper) async throws -> [Order] {
        try await StorageError.mapping {
            try await database.writer.read { db in try StoredRows.orders(db, of: shopper, limit: max(limit, 0)) }
        }
    }

    func placeOrder(expectedRevision: Int64?, for shopper: Shopper) async throws -> Order {
        // Orders are an account's: a guest's cart is never checked out, whatever the caller checked.
        guard shopper.accountId != nil else { throw ShopError.signInRequired("check out") }
        let owner = shopper.storageKey
        let key = IdempotencyKey.current
        let sessionId = WritingSession.id
        let now = now()
        let createdAt = StoredDate.date(StoredDate.milliseconds(now))
        let cache = database.cartCache
        let commits = database.commits
        let (order, _, entries) = try await StorageError.mapping {
            try await database.commits.write { db -> (Order, Cart, InboxRows.Entries) in
                try SessionCheck.requireLive(db, sessionId, at: now)
                if case .replay(let outcome) = try IdempotencyRecord.check(db, key),
                   let id = outcome["orderId"], let (order, orderShopper) = try StoredRows.order(db, id: id), orderShopper == shopper {
                    return (order, try StoredRows.cart(db, of: shopper), [])
                }
                // The cart this process knows at the stored revision, else read whole (see `CartCache`).
                let cart = try cache.current(db, of: shopper).cart
                if let expectedRevision, cart.revision != expectedRevision {
                    throw ShopError.cartChanged(revision: cart.revision)
                }
                guard !cart.isEmpty else { throw ShopError.emptyCart }
                // Each product bought as it will be stored: its stock less the line's quantity (a cart has one
                // line per product), for its price point, and the quantity the stored stock loses.
                var bought: [(product: Product, quantity: Int)] = []
                for line in cart.lines {
                    guard var product = try StoredRows.product(db, id: line.productId) else {
                        throw ShopError.productNotFound(line.productId)
                    }
                    try CartRules.checkAvailability(of: product, quantity: line.quantity)
                    product.stock -= line.quantity
                    bought.append((product, line.quantity))
                }
                let seq = try StoredRows.nextSequence(db, table: "customer_order")
                let order = Order(
                    id: Identifiers.order(seq), createdAt: createdAt,
                    lines: cart.lines.map {
                        OrderLine(productId: $0.productId, name: $0.name, unitPrice: $0.unitPrice, quantity: $0.quantity)
                    },
                    subtotal: cart.subtotal, tax: cart.tax, total: cart.total)
                try DirectStatement(db, Self.insertOrderSQL).execute([
                    .integer(Int64(seq)), .text(order.id), .integer(StoredDate.milliseconds(createdAt)), .integer(order.subtotal.minorUnits),
                    .integer(order.tax.minorUnits), .integer(order.total.minorUnits), .text(owner),
                ])
                let insertLine = try DirectStatement(db, Self.insertLineSQL)
                for (position, line) in order.lines.enumerated() {
                    try insertLine.execute([.text(order.id), .integer(Int64(position)), .text(line.productId), .text(line.name),
                                            .integer(line.unitPrice.minorUnits), .integer(Int64(line.quantity))])
                }
                // The stock of each product bought changes, and its history shows it (one point per product): one
                // write of the product's row for both.
                for (product, quantity) in bought.sorted(by: { $0.product.id < $1.product.id }) {
                    try PriceHistoryRows.record(db, product, at: now, sold: quantity)
                }
                try DirectStatement(db, Self.emptyCartSQL).execute([.text(owner)])
                try StoredRows.bumpCartRevision(db, of: shopper)
                try IdempotencyRecord.record(db, key, outcome: ["orderId": order.id], at: now)
                // Emptied: known without reading the lines back.
                let emptied = Cart(lines: [], tax: .zero, revision: try StoredRows.cartRevision(db, of: owner))
                var entries: InboxRows.Entries = [(try ChangeLog.append(db, .cart, owner, at: now), [.cartChanged(emptied, shopper: shopper)])]
                entries.append((try ChangeLog.append(db, .order, order.id, at: now), [.orderPlaced(order, shopper: shopper)]))
                entries += try InboxRows.orderPlaced(db, order: order, owner: shopper, at: now)
                // Last: see `CartCache`. The next change of the cart derives from the emptied one.
                cache.replaced(with: PricedCart(lines: [], taxRates: [], revision: emptied.revision), of: shopper, in: commits)
                return (order, emptied, entries)
            }
        }
        // Entries for the emptied cart, the order and its notification; all published, in log order, with
        // the last.
        if let last = entries.last {
            let earlier = Dictionary(uniqueKeysWithValues: entries.dropLast().map { ($0.seq, $0.events) })
            await feed.committed(last.seq, last.events, earlier: earlier)
        }
        return order
    }
}
