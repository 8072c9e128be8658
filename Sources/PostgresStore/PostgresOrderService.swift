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
        let sessionId = WritingSession.id
        let now = now()
        let createdAt = StoredDate.date(StoredDate.milliseconds(now))
        let (order, entries) = try await database.write { session -> (Order, PostgresInboxRows.Entries) in
            if case .replay(let outcome) = try await PostgresIdempotency.check(session, key),
               let id = outcome["orderId"], let (order, orderShopper) = try await PostgresRows.order(session, id: id), orderShopper == shopper {
                try await PostgresSessionCheck.requireLive(session, sessionId, at: now)
                return (order, [])
            }
            // The cart's lock: no change of this cart, from any server, between reading it and emptying it. Read
            // with it, whether the account wants to hear of its orders (no lock needed for that), and whether the
            // session the checkout is made for is live (``PostgresSessionCheck``).
            let cartLock = CartLock(owner: owner, accountId: accountId, sessionId: sessionId, now: StoredDate.milliseconds(now))
            let (lockedRevision, enabled, live) = try await session.first(cartLock)?
                .decode((Int64?, Bool, Bool).self) ?? (nil, false, false)
            guard live else { throw ShopError.sessionEnded }
            if let expectedRevision, (lockedRevision ?? 0) != expectedRevision { throw ShopError.cartChanged(revision: lockedRevision ?? 0) }
            // A cart never changed has no revision row, and nothing to lock: it was empty when this checkout looked
            // (a first add committed since comes after it).
            guard let revision = lockedRevision else { throw ShopError.emptyCart }
            let (cart, locked, seq, noticeSeq) = try await Self.lockedCart(session, owner: owner, revision: revision, notifying: enabled)
            guard !cart.lines.isEmpty, let seq else { throw ShopError.emptyCart }
            for (line, product) in zip(cart.lines, locked) { try CartRules.checkAvailability(of: product, quantity: line.quantity) }
            let priced = cart.cart
            let order = Order(
                id: Identifiers.order(Int(seq)), createdAt: createdAt,
                lines: cart.lines.map { OrderLine(productId: $0.productId, name: $0.name, unitPrice: $0.unitPrice, quantity: $0.quantity) },
                subtotal: priced.subtotal, tax: priced.tax, total: priced.total)
            var statement = PostgresStatement()
            try Self.store(order, seq: seq, owner: owner, in: &statement)
            // The stock of each product bought changed: its history shows it (one point per product), from the
            // locked row less the quantity bought (a cart has one line per product): no read back.
            try PostgresPriceHistory.record(zip(cart.lines, locked).map { line, product in
                var product = product
                product.stock -= line.quantity
                return product
            }, at: now, in: &statement)
            let ownerValue = try statement.bind(owner)
            statement.change("emptied", "DELETE FROM cart_line WHERE owner = \(ownerValue)")
            statement.change("bumped", "UPDATE cart_revision SET revision = revision + 1 WHERE owner = \(ownerValue)")
            try PostgresIdempotency.record(key, outcome: ["orderId": order.id], at: now, in: &statement)
            var logged: [(kind: ChangeLog.Kind, subject: String)] = [(.cart, owner), (.order, order.id)]
            // The account's notice goes with them: the log's lock, which every write of the database waits for, is
            // held for this statement's last part and the commit.
            let notice = try noticeSeq.map { try PostgresInboxRows.orderPlaced(order: order, owner: shopper, seq: $0, at: now, in: &statement) }
            if let notice { logged.append((.notification, notice.id)) }
            let (seqs, unread) = try await PostgresChangeLog.append(
                session, logged, at: now, after: statement, returning: notice == nil ? "NULL::bigint" : PostgresInboxRows.unreadAfter,
                as: Int?.self)
            // The emptied cart is known without reading it back: its revision row was locked above.
            let emptied = Cart(lines: [], tax: .zero, revision: revision + 1)
            var entries: PostgresInboxRows.Entries = [
                (seqs[0], [.cartChanged(emptied, shopper: shopper)]),
                (seqs[1], [.orderPlaced(order, shopper: shopper)]),
            ]
            if let notice {
                entries.append((seqs[2], [.notificationArrived(notice, replacing: nil, unreadCount: unread ?? 0, shopper: shopper)]))
            }
            return (order, entries)
        }
        // Entries for the emptied cart, the order and its notification; all published, in log order.
        await feed.committed(entries)
        return order
    }

    /// The cart as the transaction sees it (its lines in the order they were added), its products locked
    /// (`FOR NO KEY UPDATE`, in id order: the rows are sorted before they are locked) and read as they are
    /// once locked, each at the position of its line, the new order's number and, when `notifying`, its
    /// notice's: taken only when the cart has a line (a checkout refused after that leaves a gap in the numbers,
    /// as a rolled-back one always did). One statement.
    private static func lockedCart(
        _ session: PostgresSession, owner: String, revision: Int64, notifying: Bool
    ) async throws -> (cart: PricedCart, products: [Product], orderSeq: Int64?, noticeSeq: Int64?) {
        let rows = try await session.rows(LockedCart(owner: owner, notifying: notifying))
        var lines: [(seq: Int64, line: CartLine, taxRate: Int, product: Product)] = []
        var orderSeq: Int64?
        var noticeSeq: Int64?
        for row in rows {
            let (id, name, description, price, categoryId, stock, maxPerOrder, createdAt, isFeatured, quantity, taxRate, lineSeq, next, notice) =
                try row.decode((String, String, String, Int64, String, Int, Int, Int64, Bool, Int, Int, Int64, Int64, Int64?).self)
            let product = Product(
                id: id, name: name, description: description, price: Money(minorUnits: price), categoryId: categoryId, stock: stock,
                maxPerOrder: maxPerOrder, createdAt: StoredDate.date(createdAt), isFeatured: isFeatured)
            let line = CartLine(productId: id, name: name, categoryId: categoryId, unitPrice: Money(minorUnits: price), quantity: quantity)
            lines.append((lineSeq, line, taxRate, product))
            orderSeq = next
            noticeSeq = notice
        }
        lines.sort { $0.seq < $1.seq }
        return (PricedCart(lines: lines.map(\.line), taxRates: lines.map(\.taxRate), revision: revision), lines.map(\.product), orderSeq, noticeSeq)
    }

    /// The cart's lock, whether the account wants notifications, and whether the session (nil: none to check) is
    /// live: a checkout's first read, prepared.
    private struct CartLock: PostgresPreparedQuery {
        static let name = "storefront_checkout_cart_lock"
        static let sql = """
            SELECT (SELECT revision FROM cart_revision WHERE owner = $1 FOR UPDATE),
                   COALESCE((SELECT notificationsEnabled FROM account WHERE id = $2), false),
                   \(PostgresSessionCheck.liveCondition(id: "$3", now: "$4"))
            """
        let owner: String
        let accountId: Int64
        let sessionId: String?
        let now: Int64
        func makeBindings() throws -> PostgresBindings {
            var bindings = try PostgresBindings.values(owner, accountId)
            bindings.append(sessionId)
            bindings.append(now)
            return bindings
        }
    }

    /// The read of ``lockedCart(_:owner:revision:)``, prepared.
    private struct LockedCart: PostgresPreparedQuery {
        static let name = "storefront_checkout_locked_cart"
        static let sql = """
            SELECT \(PostgresRows.productColumns), c.quantity, k.taxRate, c.seq,
                   (SELECT nextval(pg_get_serial_sequence('customer_order', 'seq'))),
                   (SELECT CASE WHEN $2 THEN nextval(pg_get_serial_sequence('notification', 'seq')) END)
            FROM cart_line c JOIN product p ON p.id = c.productId JOIN category k ON k.id = p.categoryId
            WHERE c.owner = $1
            ORDER BY p.id FOR NO KEY UPDATE OF p
            """
        let owner: String
        let notifying: Bool
        func makeBindings() throws -> PostgresBindings { try .values(owner, notifying) }
    }

    /// Adds `order` and its lines, and the stock they take, to `statement` (changes `placed`, `lines` and
    /// `taken`; the lines and stock updates for all lines at once, from arrays).
    private static func store(_ order: Order, seq: Int64, owner: String, in statement: inout PostgresStatement) throws {
        let values = [
            try statement.bind(seq), try statement.bind(order.id), try statement.bind(StoredDate.milliseconds(order.createdAt)),
            try statement.bind(order.subtotal.minorUnits), try statement.bind(order.tax.minorUnits), try statement.bind(order.total.minorUnits),
            try statement.bind(owner),
        ]
        statement.change("placed", "INSERT INTO customer_order (seq, id, createdAt, subtotal, tax, total, owner) VALUES (\(values.joined(separator: ", ")))")
        let orderId = values[1]
        let productIds = try statement.bind(order.lines.map(\.productId))
        let names = try statement.bind(order.lines.map(\.name))
        let prices = try statement.bind(order.lines.map(\.unitPrice.minorUnits))
        let quantities = try statement.bind(order.lines.map { Int64($0.quantity) })
        statement.change("lines", """
            INSERT INTO order_line (orderId, position, productId, name, unitPrice, quantity)
            SELECT \(orderId), l.position - 1, l.productId, l.name, l.unitPrice, l.quantity
            FROM unnest(\(productIds)::text[], \(names)::text[], \(prices)::bigint[], \(quantities)::bigint[])
                 WITH ORDINALITY AS l(productId, name, unitPrice, quantity, position)
            """)
        statement.change("taken", """
            UPDATE product p SET stock = p.stock - t.quantity
            FROM unnest(\(productIds)::text[], \(quantities)::bigint[]) AS t(id, quantity) WHERE p.id = t.id
            """)
    }
}
