import Foundation
import GRDB
import Shop

/// Reading the shop's models from database rows and the queries several services share.
enum StoredRows {
    /// The product columns, in the order ``product(_:)`` reads them; the table must be aliased `p`.
    static let productColumns =
        "p.id, p.name, p.description, p.price, p.categoryId, p.stock, p.maxPerOrder, p.createdAt, p.isFeatured"

    /// A product from a row selected with ``productColumns``.
    static func product(_ row: Row) -> Product {
        Product(
            id: row[0], name: row[1], description: row[2], price: Money(minorUnits: row[3]),
            categoryId: row[4], stock: row[5], maxPerOrder: row[6],
            createdAt: StoredDate.date(row[7]), isFeatured: row[8])
    }

    /// Products selected by `sql`, which must select ``productColumns``.
    static func products(_ db: Database, sql: String, arguments: StatementArguments = StatementArguments()) throws -> [Product] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).map(product)
    }

    // The statements of the reads and writes below (compiled once per connection and kept: `StatementSQL`).
    private static let productSQL = StatementSQL("SELECT \(productColumns) FROM product p WHERE p.id = ?")
    private static let cartSQL = StatementSQL("""
        SELECT c.productId, p.name, p.categoryId, p.price, c.quantity, k.taxRate
        FROM cart_line c
        JOIN product p ON p.id = c.productId
        JOIN category k ON k.id = p.categoryId
        WHERE c.owner = ?
        ORDER BY c.seq
        """)
    private static let lineSQL = StatementSQL("""
        SELECT p.name, p.categoryId, p.price, c.quantity, k.taxRate
        FROM cart_line c
        JOIN product p ON p.id = c.productId
        JOIN category k ON k.id = p.categoryId
        WHERE c.owner = ? AND c.productId = ?
        """)
    private static let cartRevisionSQL = StatementSQL("SELECT revision FROM cart_revision WHERE owner = ?")
    private static let bumpCartRevisionSQL = StatementSQL("""
        INSERT INTO cart_revision (owner, revision) VALUES (?, 1)
        ON CONFLICT (owner) DO UPDATE SET revision = revision + 1
        """)
    private static let nextSequenceSQL = StatementSQL("SELECT seq FROM sqlite_sequence WHERE name = ?")

    /// One product, or `nil`.
    static func product(_ db: Database, id: String) throws -> Product? {
        try DirectStatement(db, Self.productSQL).one([.text(id)]) { row in
            Product(
                id: row.text(0), name: row.text(1), description: row.text(2), price: Money(minorUnits: row.int64(3)),
                categoryId: row.text(4), stock: row.int(5), maxPerOrder: row.int(6),
                createdAt: StoredDate.date(row.int64(7)), isFeatured: row.int64(8) != 0)
        }
    }

    /// A shopper's cart, priced, as it is in this transaction.
    ///
    /// This and the other statements of every cart change are cached (compiled once per connection):
    /// compiling them each time was a tenth of the server's CPU time per `cart/add`.
    static func cart(_ db: Database, of shopper: Shopper) throws -> Cart {
        try pricedCart(db, of: shopper).cart
    }

    /// A shopper's cart with each line's tax rate, as it is in this transaction.
    /// - Parameter revision: the cart's revision, when the caller has just read it.
    static func pricedCart(_ db: Database, of shopper: Shopper, revision: Int64? = nil) throws -> PricedCart {
        let owner = shopper.storageKey
        // Read in place from SQLite (`DirectStatement`): GRDB's cursor still made a row and a value per column
        // (callgrind: 43k instructions per checkout of a one-line cart for this read and the revision's).
        var cart = PricedCart(lines: [], taxRates: [], revision: try revision ?? cartRevision(db, of: owner))
        try DirectStatement(db, Self.cartSQL).forEachRow([.text(owner)]) { row in
            cart.lines.append(CartLine(
                productId: row.text(0), name: row.text(1), categoryId: row.text(2), unitPrice: Money(minorUnits: row.int64(3)),
                quantity: row.int(4)))
            cart.taxRates.append(row.int(5))
            return true
        }
        return cart
    }

    /// One line of a shopper's cart with its tax rate, or nil when the cart has no line of the product
    /// (or the product is gone).
    static func pricedLine(_ db: Database, owner: String, productId: String) throws -> (line: CartLine, taxRate: Int)? {
        try DirectStatement(db, Self.lineSQL).one([.text(owner), .text(productId)]) { row in
            (CartLine(productId: productId, name: row.text(0), categoryId: row.text(1), unitPrice: Money(minorUnits: row.int64(2)),
                      quantity: row.int(3)),
             row.int(4))
        }
    }

    /// The revision of an owner's cart (0 before its first change).
    static func cartRevision(_ db: Database, of owner: String) throws -> Int64 {
        try DirectStatement(db, Self.cartRevisionSQL).one([.text(owner)]) { $0.int64(0) } ?? 0
    }

    /// Marks a shopper's cart as changed.
    static func bumpCartRevision(_ db: Database, of shopper: Shopper) throws {
        // Not `RETURNING revision`: SQLite runs a RETURNING clause as a trigger program, and the statement with
        // it cost more than this one and a read of the revision after it (callgrind: 29k instructions, 11k + 6k).
        try DirectStatement(db, Self.bumpCartRevisionSQL).execute([.text(shopper.storageKey)])
    }

    /// The next value of a table's AUTOINCREMENT counter (never reused, even after deletes).
    static func nextSequence(_ db: Database, table: String) throws -> Int {
        let current = try DirectStatement(db, Self.nextSequenceSQL).one([.text(table)]) { $0.int(0) }
        return (current ?? 0) + 1
    }

    /// One order with its lines and whose it is, or `nil`.
    static func order(_ db: Database, id: String) throws -> (order: Order, shopper: Shopper)? {
        guard let owner = try String.fetchOne(db, sql: "SELECT owner FROM customer_order WHERE id = ?", arguments: [id]),
              let shopper = Shopper(storageKey: owner),
              let order = try orders(db, rows: Row.fetchAll(db, sql: """
                  SELECT id, createdAt, subtotal, tax, total FROM customer_order WHERE id = ?
                  """, arguments: [id])).first
        else { return nil }
        return (order, shopper)
    }

    /// A shopper's orders with their lines, newest first.
    static func orders(_ db: Database, of shopper: Shopper, limit: Int) throws -> [Order] {
        try orders(db, rows: Row.fetchAll(db, sql: """
            SELECT id, createdAt, subtotal, tax, total FROM customer_order WHERE owner = ? ORDER BY seq DESC LIMIT ?
            """, arguments: [shopper.storageKey, limit]))
    }

    private static func orders(_ db: Database, rows orderRows: [Row]) throws -> [Order] {
        let lineStatement = try db.cachedStatement(sql: """
            SELECT productId, name, unitPrice, quantity FROM order_line WHERE orderId = ? ORDER BY position
            """)
        return try orderRows.map { row in
            let id: String = row[0]
            let lines = try Row.fetchAll(lineStatement, arguments: [id]).map {
                OrderLine(productId: $0[0], name: $0[1], unitPrice: Money(minorUnits: $0[2]), quantity: $0[3])
            }
            return Order(
                id: id, createdAt: StoredDate.date(row[1]), lines: lines, subtotal: Money(minorUnits: row[2]),
                tax: Money(minorUnits: row[3]), total: Money(minorUnits: row[4]))
        }
    }
}
