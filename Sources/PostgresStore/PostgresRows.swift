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

    /// A shopper's cart, priced, as this transaction sees it.
    static func cart(_ session: PostgresSession, of shopper: Shopper) async throws -> Cart {
        let owner = shopper.storageKey
        let rows = try await session.rows("""
            SELECT c.productId, p.name, p.categoryId, p.price, c.quantity, k.taxRate, r.revision
            FROM cart_line c
            JOIN product p ON p.id = c.productId
            JOIN category k ON k.id = p.categoryId
            LEFT JOIN cart_revision r ON r.owner = c.owner
            WHERE c.owner = \(owner)
            ORDER BY c.seq
            """)
        var lines: [CartLine] = []
        var taxed: [(amount: Money, taxRate: Int)] = []
        var revision: Int64?
        for row in rows {
            let (productId, name, categoryId, price, quantity, taxRate, lineRevision) =
                try row.decode((String, String, String, Int64, Int, Int, Int64?).self)
            let line = CartLine(productId: productId, name: name, categoryId: categoryId, unitPrice: Money(minorUnits: price), quantity: quantity)
            lines.append(line)
            taxed.append((line.lineTotal, taxRate))
            revision = lineRevision
        }
        if rows.isEmpty { revision = try await cartRevision(session, of: owner) }
        return Cart(lines: lines, tax: TaxRules.tax(taxed), revision: revision ?? 0)
    }

    /// The revision of an owner's cart (0 before its first change).
    static func cartRevision(_ session: PostgresSession, of owner: String) async throws -> Int64 {
        try await session.value("SELECT revision FROM cart_revision WHERE owner = \(owner)", as: Int64.self) ?? 0
    }

    /// Marks a shopper's cart as changed, taking the row lock that orders every change of that cart (until
    /// the transaction ends), and returns the new revision.
    @discardableResult
    static func bumpCartRevision(_ session: PostgresSession, of shopper: Shopper) async throws -> Int64 {
        try await session.value("""
            INSERT INTO cart_revision (owner, revision) VALUES (\(shopper.storageKey), 1)
            ON CONFLICT (owner) DO UPDATE SET revision = cart_revision.revision + 1
            RETURNING revision
            """, as: Int64.self) ?? 0
    }

    /// One order with its lines and whose it is, or nil.
    static func order(_ session: PostgresSession, id: String) async throws -> (order: Order, shopper: Shopper)? {
        guard let row = try await session.first("SELECT id, createdAt, subtotal, tax, total, owner FROM customer_order WHERE id = \(id)"),
              let shopper = Shopper(storageKey: try row.makeRandomAccess()[5].decode(String.self))
        else { return nil }
        return (try await order(session, row: row), shopper)
    }

    /// A shopper's orders with their lines, newest first.
    static func orders(_ session: PostgresSession, of shopper: Shopper, limit: Int) async throws -> [Order] {
        var orders: [Order] = []
        for row in try await session.rows("""
            SELECT id, createdAt, subtotal, tax, total FROM customer_order WHERE owner = \(shopper.storageKey) ORDER BY seq DESC LIMIT \(limit)
            """) {
            orders.append(try await order(session, row: row))
        }
        return orders
    }

    /// An order from a row whose first five columns are id, createdAt, subtotal, tax, total.
    private static func order(_ session: PostgresSession, row: PostgresRow) async throws -> Order {
        let columns = row.makeRandomAccess()
        let id = try columns[0].decode(String.self)
        let lines = try await session.rows("""
            SELECT productId, name, unitPrice, quantity FROM order_line WHERE orderId = \(id) ORDER BY position
            """).map { row in
            let (productId, name, unitPrice, quantity) = try row.decode((String, String, Int64, Int).self)
            return OrderLine(productId: productId, name: name, unitPrice: Money(minorUnits: unitPrice), quantity: quantity)
        }
        return Order(
            id: id, createdAt: StoredDate.date(try columns[1].decode(Int64.self)), lines: lines,
            subtotal: Money(minorUnits: try columns[2].decode(Int64.self)), tax: Money(minorUnits: try columns[3].decode(Int64.self)),
            total: Money(minorUnits: try columns[4].decode(Int64.self)))
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
