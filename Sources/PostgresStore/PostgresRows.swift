import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Reading the shop's models from PostgreSQL rows, and the statements several services share (the
/// counterpart of the SQLite store's `StoredRows`).
enum PostgresRows {
    /// The product columns, in the order ``product(_:)`` decodes them; the table must be aliased `p`.
    static let productColumns = "p.id, p.name, p.description, p.price, p.categoryId, p.stock, p.maxPerOrder, p.createdAt, p.isFeatured"

    /// A product from a row selected with ``productColumns``.
    static func product(_ row: PostgresRow) throws -> Product {
        let (id, name, description, price, categoryId, stock, maxPerOrder, createdAt, isFeatured) =
            try row.decode((String, String, String, Int64, String, Int, Int, Int64, Bool).self)
        return Product(
            id: id, name: name, description: description, price: Money(minorUnits: price), categoryId: categoryId, stock: stock,
            maxPerOrder: maxPerOrder, createdAt: StoredDate.date(createdAt), isFeatured: isFeatured)
    }

    /// Products selected by `query`, which must select ``productColumns``.
    static func products(_ session: PostgresSession, _ query: PostgresQuery) async throws -> [Product] {
        try await session.rows(query).map(product)
    }

    /// One product, or nil.
    static func product(_ session: PostgresSession, id: String) async throws -> Product? {
        try await session.first("SELECT \(unescaped: productColumns) FROM product p WHERE p.id = \(id)").map(product)
    }

    /// One product, or nil, kept from being deleted until the transaction ends (`FOR KEY SHARE`: price and
    /// stock changes still go through): a cart line written for it cannot then fail on its foreign key
    /// because another server deleted the product meanwhile (the add reports `productNotFound` instead).
    static func productKeptFromDeletion(_ session: PostgresSession, id: String) async throws -> Product? {
        try await session.first("SELECT \(unescaped: productColumns) FROM product p WHERE p.id = \(id) FOR KEY SHARE").map(product)
    }

    /// A shopper's cart, priced, as this transaction sees it: one statement (its revision on every row, and on
    /// the one row of an empty cart).
    static func cart(_ session: PostgresSession, of shopper: Shopper) async throws -> Cart {
        let rows = try await session.rows(CartRead(owner: shopper.storageKey))
        var lines: [CartLine] = []
        var taxed: [(amount: Money, taxRate: Int)] = []
        var revision: Int64 = 0
        for row in rows {
            let (rowRevision, productId, name, categoryId, price, quantity, taxRate) =
                try row.decode((Int64?, String?, String?, String?, Int64?, Int?, Int?).self)
            revision = rowRevision ?? 0
            guard let productId, let name, let categoryId, let price, let quantity, let taxRate else { continue }
            let line = CartLine(productId: productId, name: name, categoryId: categoryId, unitPrice: Money(minorUnits: price), quantity: quantity)
            lines.append(line)
            taxed.append((line.lineTotal, taxRate))
        }
        return Cart(lines: lines, tax: TaxRules.tax(taxed), revision: revision)
    }

    /// The read of ``cart(_:of:)``, prepared: a follower's read of a cart it shows.
    private struct CartRead: PostgresPreparedQuery {
        static let name = "storefront_cart"
        static let sql = """
            SELECT r.revision, c.productId, p.name, p.categoryId, p.price, c.quantity, k.taxRate
            FROM (SELECT $1::text AS owner) o
            LEFT JOIN cart_revision r ON r.owner = o.owner
            LEFT JOIN (cart_line c JOIN product p ON p.id = c.productId JOIN category k ON k.id = p.categoryId) ON c.owner = o.owner
            ORDER BY c.seq
            """
        let owner: String
        func makeBindings() throws -> PostgresBindings { try .values(owner) }
    }

    /// Marks a shopper's cart as changed, taking the row lock that orders every change of that cart (until
    /// the transaction ends), and returns the new revision.
    @discardableResult
    static func bumpCartRevision(_ session: PostgresSession, of shopper: Shopper) async throws -> Int64 {
        try await session.value(BumpCartRevision(owner: shopper.storageKey), as: Int64.self) ?? 0
    }

    /// The bump of ``bumpCartRevision(_:of:)``, prepared: on every cart change's path.
    private struct BumpCartRevision: PostgresPreparedQuery {
        static let name = "storefront_bump_cart_revision"
        static let sql = """
            INSERT INTO cart_revision (owner, revision) VALUES ($1, 1)
            ON CONFLICT (owner) DO UPDATE SET revision = cart_revision.revision + 1
            RETURNING revision
            """
        let owner: String
        func makeBindings() throws -> PostgresBindings { try .values(owner) }
    }

    /// One order with its lines and whose it is, or nil: one statement.
    static func order(_ session: PostgresSession, id: String) async throws -> (order: Order, shopper: Shopper)? {
        guard let (order, owner) = try orders(try await session.rows(OrderRead(id: id))).first, let shopper = Shopper(storageKey: owner)
        else { return nil }
        return (order, shopper)
    }

    /// The read of ``order(_:id:)``, prepared: every follower reads every order (its stock).
    private struct OrderRead: PostgresPreparedQuery {
        static let name = "storefront_order"
        static let sql = """
            SELECT \(PostgresRows.orderColumns) FROM customer_order o LEFT JOIN order_line l ON l.orderId = o.id
            WHERE o.id = $1 ORDER BY l.position
            """
        let id: String
        func makeBindings() throws -> PostgresBindings { try .values(id) }
    }

    /// A shopper's orders with their lines, newest first: one statement.
    static func orders(_ session: PostgresSession, of shopper: Shopper, limit: Int) async throws -> [Order] {
        try orders(try await session.rows("""
            SELECT \(unescaped: orderColumns)
            FROM (SELECT * FROM customer_order WHERE owner = \(shopper.storageKey) ORDER BY seq DESC LIMIT \(limit)) o
            LEFT JOIN order_line l ON l.orderId = o.id
            ORDER BY o.seq DESC, l.position
            """)).map(\.order)
    }

    /// What ``orders(_:)`` decodes: an order's columns (the table aliased `o`), then one of its lines' (`l`,
    /// left-joined: NULLs for an order without lines).
    private static let orderColumns = "o.id, o.createdAt, o.subtotal, o.tax, o.total, o.owner, l.productId, l.name, l.unitPrice, l.quantity"

    /// Orders and their owners' keys from rows selected with ``orderColumns``, one row per line, each order's
    /// rows together and its lines in order.
    private static func orders(_ rows: [PostgresRow]) throws -> [(order: Order, owner: String)] {
        var orders: [(order: Order, owner: String)] = []
        for row in rows {
            let (id, createdAt, subtotal, tax, total, owner, productId, name, unitPrice, quantity) =
                try row.decode((String, Int64, Int64, Int64, Int64, String, String?, String?, Int64?, Int?).self)
            if orders.last?.order.id != id {
                orders.append((Order(
                    id: id, createdAt: StoredDate.date(createdAt), lines: [], subtotal: Money(minorUnits: subtotal), tax: Money(minorUnits: tax),
                    total: Money(minorUnits: total)), owner))
            }
            if let productId, let name, let unitPrice, let quantity {
                orders[orders.count - 1].order.lines.append(
                    OrderLine(productId: productId, name: name, unitPrice: Money(minorUnits: unitPrice), quantity: quantity))
            }
        }
        return orders
    }

    /// The account columns, in the order ``account(_:)`` decodes them; the table must be aliased `a`.
    static let accountColumns = "a.id, a.email, a.name, a.bio, a.notificationsEnabled, a.createdAt"

    /// An account from a row selected with ``accountColumns``.
    static func account(_ row: PostgresRow) throws -> Account {
        let (id, email, name, bio, notificationsEnabled, createdAt) = try row.decode((Int64, String, String, String, Bool, Int64).self)
        return Account(id: id, email: email, name: name, bio: bio, notificationsEnabled: notificationsEnabled, createdAt: StoredDate.date(createdAt))
    }

    /// One account, or nil.
    static func account(_ session: PostgresSession, id: Int64) async throws -> Account? {
        try await session.first("SELECT \(unescaped: accountColumns) FROM account a WHERE a.id = \(id)").map(account)
    }
}
