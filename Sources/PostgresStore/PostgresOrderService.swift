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
        // One statement: its own snapshot.
        try await database.read { session in try await PostgresRows.orders(session, of: shopper, limit: max(limit, 0)) }
    }

    func placeOrder(expectedRevision: Int64?, for shopper: Shopper) async throws -> Order {
        // Orders are an account's: a guest's cart is never checked out, whatever the caller checked.
        guard let accountId = shopper.accountId else { throw ShopError.signInRequired("check out") }
        let owner = shopper.storageKey
        let key = IdempotencyKey.current
        let now = now()
        let createdAt = StoredDate.date(StoredDate.milliseconds(now))
        let (order, entries) = try await database.write { session -> (Order, PostgresInboxRows.Entries) in
            if case .replay(let outcome) = try await PostgresIdempotency.check(session, key),
               let id = outcome["orderId"], let (order, orderShopper) = try await PostgresRows.order(session, id: id), orderShopper == shopper {
                return (order, [])
            }
            // The cart's lock: no change of this cart, from any server, between reading it and emptying it. Read
            // with it, whether the account wants to hear of its orders (no lock needed for that).
            let (revision, enabled) = try await session.first(CartLock(owner: owner, accountId: accountId))?
                .decode((Int64, Bool).self) ?? (Int64(0), false)
            if let expectedRevision, revision != expectedRevision { throw ShopError.cartChanged(revision: revision) }
            let (cart, locked, seq) = try await Self.lockedCart(session, owner: owner, revision: revision)
            guard !cart.lines.isEmpty, let seq else { throw ShopError.emptyCart }
            let products = Dictionary(uniqueKeysWithValues: locked.map { ($0.id, $0) })
            for line in cart.lines {
                guard let product = products[line.productId] else { throw ShopError.productNotFound(line.productId) }
                try CartRules.checkAvailability(of: product, quantity: line.quantity)
            }
            let priced = cart.cart
            let order = Order(
                id: Identifiers.order(Int(seq)), createdAt: createdAt,
                lines: cart.lines.map { OrderLine(productId: $0.productId, name: $0.name, unitPrice: $0.unitPrice, quantity: $0.quantity) },
                subtotal: priced.subtotal, tax: priced.tax, total: priced.total)
            // The account's notice first: its entry and counts then go with the checkout's, so that the log's lock,
            // which every write of the database waits for, is held for one statement and the commit.
            let notice = enabled ? try await PostgresInboxRows.orderPlaced(session, order: order, owner: shopper, at: now) : nil
            var statement = PostgresStatement()
            try Self.store(order, seq: seq, owner: owner, in: &statement)
            // The stock of each product bought changed: its history shows it (one point per product), from the
            // locked row less the quantity bought (a cart has one line per product): no read back.
            let bought = Dictionary(cart.lines.map { ($0.productId, $0.quantity) }, uniquingKeysWith: +)
            try PostgresPriceHistory.record(locked.map { product in
                var product = product
                product.stock -= bought[product.id] ?? 0
                return product
            }, at: now, in: &statement)
            let ownerValue = try statement.bind(owner)
            statement.with("emptied AS (DELETE FROM cart_line WHERE owner = \(ownerValue))")
            statement.with("bumped AS (UPDATE cart_revision SET revision = revision + 1 WHERE owner = \(ownerValue))")
            try PostgresIdempotency.record(key, outcome: ["orderId": order.id], at: now, in: &statement)
            var logged: [(kind: ChangeLog.Kind, subject: String)] = [(.cart, owner), (.order, order.id)]
            if let notice {
                try notice.countChange(in: &statement)
                logged.append((.notification, notice.subject))
            }
            let (seqs, unread) = try await PostgresChangeLog.append(
                session, logged, at: now, after: statement, returning: notice == nil ? "NULL::bigint" : PostgresInboxRows.Staged.unreadAfter,
                as: Int?.self)
            // The emptied cart is known without reading it back: its revision row was locked above.
            let emptied = Cart(lines: [], tax: .zero, revision: revision + 1)
            var entries: PostgresInboxRows.Entries = [
                (seqs[0], [.cartChanged(emptied, shopper: shopper)]),
                (seqs[1], [.orderPlaced(order, shopper: shopper)]),
            ]
            if let notice { entries.append((seqs[2], [notice.event(unreadCount: unread ?? 0)])) }
            return (order, entries)
        }
        // Entries for the emptied cart, the order and its notification; all published, in log order.
        await feed.committed(entries)
        return order
    }

    /// The cart as the transaction sees it (its lines in the order they were added), its products locked
    /// (`FOR NO KEY UPDATE`, in id order: the rows are sorted before they are locked) and read as they are
    /// once locked, and the new order's number, taken only when the cart has a line (a checkout refused after
    /// that leaves a gap in the numbers, as a rolled-back one always did). One statement.
    private static func lockedCart(
        _ session: PostgresSession, owner: String, revision: Int64
    ) async throws -> (cart: PricedCart, products: [Product], orderSeq: Int64?) {
        let rows = try await session.rows(LockedCart(owner: owner))
        var products: [Product] = []
        var lines: [(seq: Int64, line: CartLine, taxRate: Int)] = []
        var orderSeq: Int64?
        for row in rows {
            let (id, name, description, price, categoryId, stock, maxPerOrder, createdAt, isFeatured, quantity, taxRate, lineSeq, next) =
                try row.decode((String, String, String, Int64, String, Int, Int, Int64, Bool, Int, Int, Int64, Int64).self)
            products.append(Product(
                id: id, name: name, description: description, price: Money(minorUnits: price), categoryId: categoryId, stock: stock,
                maxPerOrder: maxPerOrder, createdAt: StoredDate.date(createdAt), isFeatured: isFeatured))
            lines.append((lineSeq, CartLine(productId: id, name: name, categoryId: categoryId, unitPrice: Money(minorUnits: price), quantity: quantity), taxRate))
            orderSeq = next
        }
        lines.sort { $0.seq < $1.seq }
        return (PricedCart(lines: lines.map(\.line), taxRates: lines.map(\.taxRate), revision: revision), products, orderSeq)
    }

    /// The cart's lock, and whether the account wants notifications: a checkout's first read, prepared.
    private struct CartLock: PostgresPreparedQuery {
        static let name = "storefront_checkout_cart_lock"
        static let sql = """
            SELECT COALESCE((SELECT revision FROM cart_revision WHERE owner = $1 FOR UPDATE), 0),
                   COALESCE((SELECT notificationsEnabled FROM account WHERE id = $2), false)
            """
        let owner: String
        let accountId: Int64
        func makeBindings() throws -> PostgresBindings { try .values(owner, accountId) }
    }

    /// The read of ``lockedCart(_:owner:revision:)``, prepared.
    private struct LockedCart: PostgresPreparedQuery {
        static let name = "storefront_checkout_locked_cart"
        static let sql = """
            SELECT \(PostgresRows.productColumns), c.quantity, k.taxRate, c.seq,
                   (SELECT nextval(pg_get_serial_sequence('customer_order', 'seq')))
            FROM cart_line c JOIN product p ON p.id = c.productId JOIN category k ON k.id = p.categoryId
            WHERE c.owner = $1
            ORDER BY p.id FOR NO KEY UPDATE OF p
            """
        let owner: String
        func makeBindings() throws -> PostgresBindings { try .values(owner) }
    }

    /// Adds `order` and its lines, and the stock they take, to `statement` (`WITH` queries `placed`, `lines`
    /// and `taken`; the lines and stock updates for all lines at once, from arrays).
    private static func store(_ order: Order, seq: Int64, owner: String, in statement: inout PostgresStatement) throws {
        let values = [
            try statement.bind(seq), try statement.bind(order.id), try statement.bind(StoredDate.milliseconds(order.createdAt)),
            try statement.bind(order.subtotal.minorUnits), try statement.bind(order.tax.minorUnits), try statement.bind(order.total.minorUnits),
            try statement.bind(owner),
        ]
        statement.with("""
            placed AS (INSERT INTO customer_order (seq, id, createdAt, subtotal, tax, total, owner) VALUES (\(values.joined(separator: ", "))))
            """)
        let orderId = values[1]
        let productIds = try statement.bind(order.lines.map(\.productId))
        let names = try statement.bind(order.lines.map(\.name))
        let prices = try statement.bind(order.lines.map(\.unitPrice.minorUnits))
        let quantities = try statement.bind(order.lines.map { Int64($0.quantity) })
        statement.with("""
            lines AS (INSERT INTO order_line (orderId, position, productId, name, unitPrice, quantity)
                      SELECT \(orderId), l.position - 1, l.productId, l.name, l.unitPrice, l.quantity
                      FROM unnest(\(productIds)::text[], \(names)::text[], \(prices)::bigint[], \(quantities)::bigint[])
                           WITH ORDINALITY AS l(productId, name, unitPrice, quantity, position))
            """)
        statement.with("""
            taken AS (UPDATE product p SET stock = p.stock - t.quantity
                      FROM unnest(\(productIds)::text[], \(quantities)::bigint[]) AS t(id, quantity) WHERE p.id = t.id)
            """)
    }
}
