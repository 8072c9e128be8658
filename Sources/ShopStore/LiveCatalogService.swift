import Foundation
import GRDB
import Shop

/// The catalog over the shop database. Changes write change-log entries and publish on the feed after
/// they commit.
struct LiveCatalogService: CatalogService {
    let database: ShopDatabase
    let feed: ChangeFeed
    let now: @Sendable () -> Date

    func page(_ query: ProductQuery) async throws -> ProductPage {
        let window = ProductPageWindow(query)
        let reader = ProductPageReader(query: query, limit: window.limit, offset: window.offset, nameOrder: database.nameOrder)
        let page = try await StorageError.mapping {
            try await database.writer.read { db in try reader.read(db) }
        }
        database.nameOrder.readIfWanted(from: database.writer)
        return page
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
                    SELECT id, name, productCount FROM category ORDER BY name COLLATE NOCASE, id
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
        let key = IdempotencyKey.current
        let (product, seq) = try await StorageError.mapping {
            try await database.write { db -> (Product, Int64?) in
                if case .replay(let outcome) = try IdempotencyRecord.check(db, key),
                   let id = outcome["productId"], let product = try StoredRows.product(db, id: id) {
                    return (product, nil)
                }
                guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM category WHERE id = ?)",
                                        arguments: [newProduct.categoryId]) == true
                else { throw ShopError.categoryNotFound(newProduct.categoryId) }
                let textVersion = try SearchPrefixCounts.versions(db).version
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
                try SearchPrefixCounts.textsChanged(db, since: textVersion, [(product.id, nil, ProductText.stored(db, id: product.id))])
                try CategoryCounts.add(1, to: product.categoryId, db)
                try IdempotencyRecord.record(db, key, outcome: ["productId": product.id], at: createdAt)
                try PriceHistoryRows.record(db, product, at: createdAt)
                return (product, try ChangeLog.append(db, .productCreated, product.id, at: createdAt))
            }
        }
        if let seq { await feed.committed(seq, [.productCreated(product)]) }
        return product
    }

    func delete(ids: [String]) async throws {
        let requested = Array(Set(ids)).sorted()
        guard !requested.isEmpty else { return }
        let key = IdempotencyKey.current
        let now = now()
        let (deleted, carts, seq) = try await StorageError.mapping {
            try await database.write { db -> ([String], [(Shopper, Cart)], Int64?) in
                if case .replay = try IdempotencyRecord.check(db, key) { return ([], [], nil) }
                var deleted: [String] = []
                var texts: [(id: String, old: ProductText?, new: ProductText?)] = []
                var owners = Set<String>()
                var removedFrom: [String: Int] = [:]
                let textVersion = try SearchPrefixCounts.versions(db).version
                for chunk in stride(from: 0, to: requested.count, by: 500).map({ requested[$0..<min($0 + 500, requested.count)] }) {
                    let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                    let arguments = StatementArguments(Array(chunk))
                    for row in try Row.fetchAll(db, sql: "SELECT id, name, description, categoryId FROM product WHERE id IN (\(placeholders))",
                                                arguments: arguments) {
                        deleted.append(row[0])
                        texts.append((row[0], ProductText(name: row[1], description: row[2]), nil))
                        removedFrom[row[3], default: 0] += 1
                    }
                    owners.formUnion(try String.fetchAll(db, sql: """
                        SELECT DISTINCT owner FROM cart_line WHERE productId IN (\(placeholders))
                        """, arguments: arguments))
                    try db.execute(sql: "DELETE FROM product WHERE id IN (\(placeholders))", arguments: arguments)
                }
                try SearchPrefixCounts.textsChanged(db, since: textVersion, texts)
                for (categoryId, count) in removedFrom { try CategoryCounts.add(-count, to: categoryId, db) }
                try IdempotencyRecord.record(db, key, at: now)
                guard !deleted.isEmpty else { return ([], [], nil) }
                var seq = try ChangeLog.append(db, .productsDeleted, deleted.sorted().joined(separator: ","), at: now)
                // Every cart that lost lines changed: one entry each, after the deletion's.
                var carts: [(Shopper, Cart)] = []
                for shopper in owners.sorted().compactMap(Shopper.init(storageKey:)) {
                    try StoredRows.bumpCartRevision(db, of: shopper)
                    seq = try ChangeLog.append(db, .cart, shopper.storageKey, at: now)
                    carts.append((shopper, try StoredRows.cart(db, of: shopper)))
                }
                return (deleted, carts, seq)
            }
        }
        guard let seq else { return }
        // The deletion's entry, then each changed cart's: published in that order.
        var events: [[ShopEvent]] = [[.productsDeleted(deleted.sorted())]]
        events += carts.map { [.cartChanged($0.1, shopper: $0.0)] }
        let first = seq - Int64(events.count - 1)
        let earlier = Dictionary(uniqueKeysWithValues: events.dropLast().enumerated().map { (first + Int64($0.offset), $0.element) })
        await feed.committed(seq, events.last!, earlier: earlier)
    }

    func update(id: String, _ update: ProductUpdate) async throws -> Product {
        let now = now()
        let key = IdempotencyKey.current
        let (product, entries) = try await StorageError.mapping {
            try await database.write { db -> (Product, [(seq: Int64, events: [ShopEvent])]) in
                guard let old = try StoredRows.product(db, id: id) else { throw ShopError.productNotFound(id) }
                if case .replay = try IdempotencyRecord.check(db, key) { return (old, []) }
                let new = update.applied(to: old)
                let errors = ProductRules.errors(for: new)
                guard errors.isEmpty else { throw ShopError.validationFailed(errors) }
                if new.categoryId != old.categoryId,
                   try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM category WHERE id = ?)", arguments: [new.categoryId]) != true {
                    throw ShopError.categoryNotFound(new.categoryId)
                }
                try IdempotencyRecord.record(db, key, outcome: ["productId": id], at: now)
                guard new != old else { return (old, []) }
                return (new, try ProductChangeRows.store(db, from: old, to: new, at: now))
            }
        }
        await feed.committed(entries)
        return product
    }

    func priceHistory(productId: String, limit: Int) async throws -> [PricePoint] {
        let history = try await StorageError.mapping {
            try await database.writer.read { db -> [PricePoint]? in
                guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM product WHERE id = ?)", arguments: [productId]) == true
                else { return nil }
                return try PriceHistoryRows.history(db, productId: productId, limit: limit)
            }
        }
        guard let history else { throw ShopError.productNotFound(productId) }
        return history
    }
}
