import Foundation
import GRDB
import Shop

/// Orders over the shop database: placing the cart as an order in one transaction, and the orders placed.
/// Placing publishes the emptied cart and then the order on the feed after the commit.
struct LiveOrderService: OrderService {
    let database: ShopDatabase
    let events: ShopEvents
    let now: @Sendable () -> Date

    func recentOrders(limit: Int) async throws -> [Order] {
        try await StorageError.mapping {
            try await database.writer.read { db in try StoredRows.orders(db, limit: max(limit, 0)) }
        }
    }

    func placeOrder() async throws -> Order {
        let createdAt = StoredDate.date(StoredDate.milliseconds(now()))
        let (order, cart) = try await StorageError.mapping {
            try await database.commits.write { db in
                let cart = try StoredRows.cart(db)
                guard !cart.isEmpty else { throw ShopError.emptyCart }
                for line in cart.lines {
                    guard let product = try StoredRows.product(db, id: line.productId) else {
                        throw ShopError.productNotFound(line.productId)
                    }
                    try LiveCartService.checkAvailability(of: product, quantity: line.quantity)
                }
                let seq = try StoredRows.nextSequence(db, table: "customer_order")
                let order = Order(
                    id: Identifiers.order(seq), createdAt: createdAt,
                    lines: cart.lines.map {
                        OrderLine(productId: $0.productId, name: $0.name, unitPrice: $0.unitPrice, quantity: $0.quantity)
                    },
                    subtotal: cart.subtotal, tax: cart.tax, total: cart.total)
                try db.execute(sql: """
                    INSERT INTO customer_order (seq, id, createdAt, subtotal, tax, total) VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [seq, order.id, StoredDate.milliseconds(createdAt), order.subtotal.minorUnits,
                                     order.tax.minorUnits, order.total.minorUnits])
                let insertLine = try db.makeStatement(sql: """
                    INSERT INTO order_line (orderId, position, productId, name, unitPrice, quantity) VALUES (?, ?, ?, ?, ?, ?)
                    """)
                let decrementStock = try db.makeStatement(sql: "UPDATE product SET stock = stock - ? WHERE id = ?")
                for (position, line) in order.lines.enumerated() {
                    try insertLine.execute(arguments: [order.id, position, line.productId, line.name,
                                                       line.unitPrice.minorUnits, line.quantity])
                    try decrementStock.execute(arguments: [line.quantity, line.productId])
                }
                try db.execute(sql: "DELETE FROM cart_line")
                try StoredRows.bumpCartRevision(db)
                return (order, try StoredRows.cart(db))
            }
        }
        await events.publish(.cartChanged(cart))
        await events.publish(.orderPlaced(order))
        return order
    }
}
