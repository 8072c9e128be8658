import GRDB
import JSON

/// What a shop database file holds, read by the test itself through GRDB, read-only: the test neither
/// checkpoints nor repairs the file, so the next server has to recover whatever a killed one left.
struct StoredShop {
    /// One placed order.
    struct StoredOrder: Equatable {
        /// Quantity by product id.
        var lines: [String: Int]
        var subtotal: Int
        var tax: Int
        var total: Int
        /// The sum of unit price times quantity over the lines, in cents.
        var lineTotal: Int

        /// Whether it has lines and its amounts add up.
        var isConsistent: Bool { !lines.isEmpty && subtotal == lineTotal && total == subtotal + tax }
    }

    /// Whose cart ``cart`` is: the owner key it was read for (`a:<accountId>`, `g:<guestId>`).
    var owner: String
    /// Quantity by product id, in the cart of ``owner``.
    var cart: [String: Int]
    /// The cart's product ids in the order of their lines (the order the cart shows).
    var cartOrder: [String]
    /// Every order in the file, whoever placed it, by order id (stock is checked against all of them).
    var orders: [String: StoredOrder]
    /// Stock by product id.
    var stock: [String: Int]
    /// Largest quantity one order may have, by product id.
    var maxPerOrder: [String: Int]
    /// `PRAGMA integrity_check`: "ok" when intact. A PostgreSQL database has no such check of the whole
    /// database (its pages are the server's, not a file the test can read): "ok" there means only that
    /// every query of the read succeeded.
    var integrity: String
    /// The idempotency keys recorded with stored changes, with their outcomes as stored (`orderId=o-000012`).
    var idempotencyKeys: [String: String]

    /// The owner key of each order, by order id.
    var orderOwners: [String: String]

    /// Reads the database at `path` (a SQLite file, or a PostgreSQL URL), with the cart of `owner` (each
    /// session has a cart of its own).
    static func read(path: String, owner: String) throws -> StoredShop {
        if path.hasPrefix("postgres") { return try readPostgres(url: path, owner: owner) }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        return try queue.read { db in
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")
            var cart: [String: Int] = [:]
            var cartOrder: [String] = []
            for row in try Row.fetchAll(db, sql: "SELECT productId, quantity FROM cart_line WHERE owner = ? ORDER BY seq", arguments: [owner]) {
                cart[row[0]] = row[1]
                cartOrder.append(row[0])
            }
            var orders: [String: StoredOrder] = [:]
            var orderOwners: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, subtotal, tax, total, owner FROM customer_order") {
                orders[row[0]] = StoredOrder(lines: [:], subtotal: row[1], tax: row[2], total: row[3], lineTotal: 0)
                orderOwners[row[0]] = row[4]
            }
            for row in try Row.fetchAll(db, sql: "SELECT orderId, productId, unitPrice, quantity FROM order_line") {
                let orderId: String = row[0]
                let productId: String = row[1]
                let unitPrice: Int = row[2]
                let quantity: Int = row[3]
                // An order line without its order shows as an order without amounts, which is inconsistent.
                var order = orders[orderId] ?? StoredOrder(lines: [:], subtotal: -1, tax: -1, total: -1, lineTotal: 0)
                order.lines[productId, default: 0] += quantity
                order.lineTotal += unitPrice * quantity
                orders[orderId] = order
            }
            var stock: [String: Int] = [:]
            var maxPerOrder: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, stock, maxPerOrder FROM product") {
                stock[row[0]] = row[1]
                maxPerOrder[row[0]] = row[2]
            }
            var keys: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT key, outcome FROM idempotency_key") {
                keys[row[0]] = row[1]
            }
            return StoredShop(
                owner: owner, cart: cart, cartOrder: cartOrder, orders: orders, stock: stock, maxPerOrder: maxPerOrder,
                integrity: integrity, idempotencyKeys: keys, orderOwners: orderOwners)
        }
    }

    /// Reads a PostgreSQL database through `psql`, the same queries as a file's.
    private static func readPostgres(url: String, owner: String) throws -> StoredShop {
        let rows = { (sql: String) throws -> [[String]] in try Psql.run(url: url, sql: sql) }
        var cart: [String: Int] = [:]
        var cartOrder: [String] = []
        let quotedOwner = "'" + owner.replacingOccurrences(of: "'", with: "''") + "'"
        for row in try rows("SELECT productId, quantity FROM cart_line WHERE owner = \(quotedOwner) ORDER BY seq") {
            cart[row[0]] = Int(row[1])
            cartOrder.append(row[0])
        }
        var orders: [String: StoredOrder] = [:]
        var orderOwners: [String: String] = [:]
        for row in try rows("SELECT id, subtotal, tax, total, owner FROM customer_order") {
            orders[row[0]] = StoredOrder(lines: [:], subtotal: Int(row[1])!, tax: Int(row[2])!, total: Int(row[3])!, lineTotal: 0)
            orderOwners[row[0]] = row[4]
        }
        for row in try rows("SELECT orderId, productId, unitPrice, quantity FROM order_line") {
            var order = orders[row[0]] ?? StoredOrder(lines: [:], subtotal: -1, tax: -1, total: -1, lineTotal: 0)
            order.lines[row[1], default: 0] += Int(row[3])!
            order.lineTotal += Int(row[2])! * Int(row[3])!
            orders[row[0]] = order
        }
        var stock: [String: Int] = [:]
        var maxPerOrder: [String: Int] = [:]
        for row in try rows("SELECT id, stock, maxPerOrder FROM product") {
            stock[row[0]] = Int(row[1])
            maxPerOrder[row[0]] = Int(row[2])
        }
        var keys: [String: String] = [:]
        for row in try rows("SELECT key, outcome FROM idempotency_key") { keys[row[0]] = row[1] }
        return StoredShop(
            owner: owner, cart: cart, cartOrder: cartOrder, orders: orders, stock: stock, maxPerOrder: maxPerOrder,
            integrity: "ok", idempotencyKeys: keys, orderOwners: orderOwners)
    }

    /// The cart's lines in order, as `[productId, quantity]` pairs (the shape ``cartLines(of:)`` gives a state).
    var cartLines: [StoredLine] { cartOrder.map { StoredLine(productId: $0, quantity: cart[$0]!) } }

    /// A cart line's product and quantity, as a cart state shows them.
    struct StoredLine: Equatable, CustomStringConvertible {
        var productId: String
        var quantity: Int

        var description: String { "\(productId)×\(quantity)" }
    }

    /// The lines of a cart ViewModel's state, in order.
    static func cartLines(of state: JSONValue) -> [StoredLine] {
        (state["lines"]?.arrayValue ?? []).map { line in
            StoredLine(productId: line["productId"]?.stringValue ?? "?", quantity: Int(line["quantity"]?.integerValue ?? -1))
        }
    }

    /// Units of each product in all orders.
    var orderedUnits: [String: Int] {
        var units: [String: Int] = [:]
        for order in orders.values {
            for (productId, quantity) in order.lines { units[productId, default: 0] += quantity }
        }
        return units
    }

    /// What does not add up within the file: integrity, orders without lines or with wrong amounts, orders
    /// someone other than ``owner`` placed (every test that checks out does so as that one account),
    /// stock that does not equal `initialStock` less the ordered units.
    func inconsistencies(initialStock: [String: Int]) -> [String] {
        var problems: [String] = []
        if integrity != "ok" { problems.append("integrity_check: \(integrity)") }
        for (id, order) in orders.sorted(by: { $0.key < $1.key }) where !order.isConsistent {
            problems.append("order \(id) is inconsistent: \(order)")
        }
        for (id, placedBy) in orderOwners.sorted(by: { $0.key < $1.key }) where placedBy != owner {
            problems.append("order \(id) was placed by \(placedBy), not \(owner)")
        }
        let units = orderedUnits
        for (productId, initial) in initialStock.sorted(by: { $0.key < $1.key }) {
            let expected = initial - units[productId, default: 0]
            if stock[productId] != expected {
                problems.append("\(productId): stock \(stock[productId].map(String.init) ?? "missing"), expected \(initial) - \(units[productId, default: 0]) ordered = \(expected)")
            }
        }
        return problems
    }
}
