import Foundation
import GRDB
import Shop

/// The catalog over the shop database. Changes publish on the feed after they commit.
struct LiveCatalogService: CatalogService {
    let database: ShopDatabase
    let events: ShopEvents
    let now: @Sendable () -> Date

    /// The most products one page may hold.
    static let maximumPageSize = 200

    func page(_ query: ProductQuery) async throws -> ProductPage {
        let reader = ProductPageReader(
            query: query, limit: min(max(query.limit, 0), Self.maximumPageSize), offset: max(query.offset, 0))
        return try await StorageError.mapping {
            try await database.writer.read { db in try reader.read(db) }
        }
    }

    func product(id: String) async throws -> Product {
        let product = try await StorageError.mapping {
            try await database.writer.read { db in try StoredRows.product(db, id: id) }
        }
        guard let product else { throw ShopError.productNotFound(id) }
        return product
    }

    func categories() async throws -> [CategorySummary] {
        try await StorageError.mapping {
            try await database.writer.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT k.id, k.name, (SELECT COUNT(*) FROM product p WHERE p.categoryId = k.id)
                    FROM category k ORDER BY k.name COLLATE NOCASE, k.id
                    """).map { CategorySummary(category: Category(id: $0[0], name: $0[1]), productCount: $0[2]) }
            }
        }
    }

    func featured(limit: Int) async throws -> [Product] {
        try await StorageError.mapping {
            try await database.writer.read { db in
                try StoredRows.products(db, sql: """
                    SELECT \(StoredRows.productColumns) FROM product p WHERE p.isFeatured = 1
                    ORDER BY p.createdAt DESC, p.id LIMIT ?
                    """, arguments: [max(limit, 0)])
            }
        }
    }

    func create(_ newProduct: NewProduct) async throws -> Product {
        let errors = ProductRules.errors(for: newProduct)
        guard errors.isEmpty else { throw ShopError.validationFailed(errors) }
        let createdAt = now()
        let product = try await StorageError.mapping {
            try await database.writer.write { db in
                guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM category WHERE id = ?)",
                                        arguments: [newProduct.categoryId]) == true
                else { throw ShopError.categoryNotFound(newProduct.categoryId) }
                let seq = try StoredRows.nextSequence(db, table: "product")
                let product = Product(
                    id: Identifiers.product(seq),
                    name: newProduct.name.trimmingCharacters(in: .whitespacesAndNewlines),
                    description: newProduct.description, price: newProduct.price,
                    categoryId: newProduct.categoryId, stock: newProduct.stock, maxPerOrder: newProduct.maxPerOrder,
                    createdAt: StoredDate.date(StoredDate.milliseconds(createdAt)), isFeatured: newProduct.isFeatured)
                try db.execute(sql: """
                    INSERT INTO product (seq, id, name, description, price, categoryId, stock, maxPerOrder, createdAt, isFeatured)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [
                        seq, product.id, product.name, product.description, product.price.minorUnits,
                        product.categoryId, product.stock, product.maxPerOrder,
                        StoredDate.milliseconds(product.createdAt), product.isFeatured,
                    ])
                return product
            }
        }
        await events.publish(.productCreated(product))
        return product
    }

    func delete(ids: [String]) async throws {
        let requested = Array(Set(ids)).sorted()
        guard !requested.isEmpty else { return }
        let (deleted, cart) = try await StorageError.mapping {
            try await database.writer.write { db -> ([String], Cart?) in
                var deleted: [String] = []
                var cartChanged = false
                for chunk in stride(from: 0, to: requested.count, by: 500).map({ requested[$0..<min($0 + 500, requested.count)] }) {
                    let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                    let arguments = StatementArguments(Array(chunk))
                    deleted += try String.fetchAll(db, sql: "SELECT id FROM product WHERE id IN (\(placeholders))", arguments: arguments)
                    cartChanged = try cartChanged || Bool.fetchOne(db, sql: """
                        SELECT EXISTS (SELECT 1 FROM cart_line WHERE productId IN (\(placeholders)))
                        """, arguments: arguments) == true
                    try db.execute(sql: "DELETE FROM product WHERE id IN (\(placeholders))", arguments: arguments)
                }
                guard cartChanged else { return (deleted, nil) }
                try StoredRows.bumpCartRevision(db)
                return (deleted, try StoredRows.cart(db))
            }
        }
        guard !deleted.isEmpty else { return }
        await events.publish(.productsDeleted(deleted.sorted()))
        if let cart { await events.publish(.cartChanged(cart)) }
    }
}
