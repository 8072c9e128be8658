import Foundation
import PostgresNIO
import Shop
import ShopStore

/// The catalog over PostgreSQL, with the SQLite store's rules (`LiveCatalogService`): pages by category,
/// search (``PostgresSearch``) and sort order, products created, changed and deleted in one transaction
/// each, with their change-log entries; a change is published on the feed after it commits, before the
/// call returns.
///
/// **Concurrent changes.** Several servers may change one product at once. `update` locks the product's
/// row (`SELECT … FOR NO KEY UPDATE`) before reading the version it compares the change against, so a second
/// change waits for the first to commit and then applies to its result: no change is lost, and each one's
/// price point, notifications and entries describe what it really changed. `delete` locks the rows it
/// deletes first too: a cart line cannot be added to them meanwhile (its foreign-key check waits), so the
/// carts it reads are all the carts that lose lines.
struct PostgresCatalogService: CatalogService {
    let database: PostgresShopDatabase
    let feed: ChangeFeed
    let now: @Sendable () -> Date

    /// A catalog over `database`, publishing its changes on `feed`, dating them with `now`.
    init(database: PostgresShopDatabase, feed: ChangeFeed, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.feed = feed
        self.now = now
    }

    /// One page of the products matching `query`, and their number, read in one snapshot.
    func page(_ query: ProductQuery) async throws -> ProductPage {
        let window = ProductPageWindow(query)
        let words: [String]?
        switch PostgresSearch.filter(for: query.searchText) {
        case .everything: words = nil
        case .nothing: return ProductPage(products: [], totalCount: 0)
        case .words(let searched): words = searched
        }
        let categoryId = query.categoryId
        let sort = query.sort
        // A NULL parameter turns its condition off. Each query is planned with its values (postgres-nio
        // sends unnamed statements), so the planner drops the conditions that are off and sees the search
        // as a constant `tsquery`.
        return try await database.snapshot { session in
            // Not searching, the categories' kept counts say how many (each product is in one category).
            let countQuery: PostgresQuery = words == nil ? """
                SELECT (SELECT COALESCE(SUM(productCount), 0)::bigint FROM category
                        WHERE \(categoryId)::text IS NULL OR id = \(categoryId)),
                       (SELECT MAX(seq) FROM product)
                """ : """
                SELECT (SELECT COUNT(*) FROM product p
                        WHERE (\(categoryId)::text IS NULL OR p.categoryId = \(categoryId))
                          AND p.searchVector @@ storefront_search_query(\(words))),
                       (SELECT MAX(seq) FROM product)
                """
            let counted = try await session.first(countQuery)
            let (total, maximumSeq) = try counted?.decode((Int, Int64?).self) ?? (0, nil)
            guard total > window.offset, window.limit > 0 else { return ProductPage(products: [], totalCount: total) }
            // The planner cannot tell how many products a prefix matches (its estimate is a fixed guess): left
            // to itself it walks the whole sort index looking for a word nobody uses (180 ms at 100 000
            // products). The count says, and the SQLite store's rule picks between walking the index in page
            // order and sorting the matches.
            let walking = words == nil || window.prefersWalking(matches: total, products: Int(maximumSeq ?? 0))
            let products = try await PostgresRows.products(session, """
                SELECT \(unescaped: PostgresRows.productColumns) FROM product p
                WHERE (\(categoryId)::text IS NULL OR p.categoryId = \(categoryId))
                  AND (\(words)::text[] IS NULL OR p.searchVector @@ storefront_search_query(\(words)))
                ORDER BY \(unescaped: Self.orderClause(sort, alongIndex: walking)) LIMIT \(window.limit) OFFSET \(window.offset)
                """)
            return ProductPage(products: products, totalCount: total)
        }
    }

    /// The ORDER BY terms of a sort, each ending with the id so that pages never overlap. By name, the order
    /// is that of the index `product_by_name` (`lower(name), id`): on a database with the C locale (as
    /// scripts/postgres.sh creates it) that is SQLite's `COLLATE NOCASE` order, ASCII letters folded and
    /// the rest compared by code point.
    ///
    /// Without `alongIndex`, the first term is written so that no index serves it (`|| ''`, `+ 0`: the same
    /// order), which leaves the planner one plan: collect the matches from the search index and sort them.
    /// The SQLite store's reader keeps the index out with a unary `+` for the same reason.
    static func orderClause(_ sort: ProductSort, alongIndex: Bool = true) -> String {
        switch (sort, alongIndex) {
        case (.name, true): "lower(p.name), p.id"
        case (.name, false): "lower(p.name) || '', p.id"
        case (.price, true): "p.price, p.id"
        case (.price, false): "p.price + 0, p.id"
        case (.newest, true): "p.createdAt DESC, p.id"
        case (.newest, false): "p.createdAt + 0 DESC, p.id"
        }
    }

    /// Product `id`.
    /// - Throws: ``ShopError`` `productNotFound`.
    func product(id: String) async throws -> Product {
        guard let product = try await database.read({ session in try await PostgresRows.product(session, id: id) })
        else { throw ShopError.productNotFound(id) }
        return product
    }

    /// Every category with its number of products, by name (case-insensitively), then id.
    func categories() async throws -> [CategorySummary] {
        try await database.read { session in
            try await session.rows("""
                SELECT id, name, productCount FROM category ORDER BY lower(name), id
                """).map { row in
                let (id, name, count) = try row.decode((String, String, Int).self)
                return CategorySummary(category: Category(id: id, name: name), productCount: count)
            }
        }
    }

    /// Up to `limit` featured products, newest first.
    func featured(limit: Int) async throws -> [Product] {
        try await database.read { session in
            try await PostgresRows.products(session, """
                SELECT \(unescaped: PostgresRows.productColumns) FROM product p WHERE p.isFeatured
                ORDER BY p.createdAt DESC, p.id LIMIT \(max(limit, 0))
                """)
        }
    }

    /// Adds a product (keyed by ``IdempotencyKey/current``: a retry returns the product created first), with
    /// its first price point and a `productCreated` entry; publishes it after the commit.
    /// - Throws: ``ShopError`` `validationFailed` or `categoryNotFound`.
    func create(_ newProduct: NewProduct) async throws -> Product {
        let errors = ProductRules.errors(for: newProduct)
        guard errors.isEmpty else { throw ShopError.validationFailed(errors) }
        let createdAt = now()
        let key = IdempotencyKey.current
        let (product, seq) = try await database.write { session -> (Product, Int64?) in
            if case .replay(let outcome) = try await PostgresIdempotency.check(session, key),
               let id = outcome["productId"], let product = try await PostgresRows.product(session, id: id) {
                return (product, nil)
            }
            guard try await Self.categoryExists(session, newProduct.categoryId) else { throw ShopError.categoryNotFound(newProduct.categoryId) }
            // The number comes from the table's identity sequence, as SQLite's AUTOINCREMENT counter gives
            // it: never reused, so an id never names two products over time.
            guard let seq = try await session.value("SELECT nextval(pg_get_serial_sequence('product', 'seq'))", as: Int64.self)
            else { throw ShopError(reason: ShopError.Reason.storageFailed, message: "No product number was given.") }
            let product = Product(
                id: Identifiers.product(Int(seq)), name: newProduct.name.trimmingCharacters(in: .whitespacesAndNewlines),
                description: newProduct.description, price: newProduct.price, categoryId: newProduct.categoryId, stock: newProduct.stock,
                maxPerOrder: newProduct.maxPerOrder, createdAt: StoredDate.date(StoredDate.milliseconds(createdAt)),
                isFeatured: newProduct.isFeatured)
            try await session.execute("""
                INSERT INTO product (seq, id, name, description, price, categoryId, stock, maxPerOrder, createdAt, isFeatured)
                VALUES (\(seq), \(product.id), \(product.name), \(product.description), \(product.price.minorUnits), \(product.categoryId),
                        \(Int64(product.stock)), \(Int64(product.maxPerOrder)), \(StoredDate.milliseconds(product.createdAt)), \(product.isFeatured))
                """)
            try await PostgresCategoryCounts.add(1, to: product.categoryId, session)
            try await PostgresIdempotency.record(session, key, outcome: ["productId": product.id], at: createdAt)
            try await PostgresPriceHistory.record(session, product, at: createdAt)
            return (product, try await PostgresChangeLog.append(session, .productCreated, product.id, at: createdAt))
        }
        if let seq { await feed.committed(seq, [.productCreated(product)]) }
        return product
    }

    /// Removes the products of `ids` that exist, with their cart lines, favourites and price points; writes
    /// a `productsDeleted` entry, then a new revision and a `cart` entry for each cart that lost lines.
    func delete(ids: [String]) async throws {
        let requested = Array(Set(ids)).sorted()
        guard !requested.isEmpty else { return }
        let key = IdempotencyKey.current
        let now = now()
        let entries = try await database.write { session -> PostgresInboxRows.Entries in
            if case .replay = try await PostgresIdempotency.check(session, key) { return [] }
            // Locked first (in id order, as checkouts lock products): no cart line can be added to them from
            // here to the commit, so the owners read next are every cart that loses lines.
            let deleted = try await session.rows("SELECT id FROM product WHERE id = ANY(\(requested)) ORDER BY id FOR UPDATE")
                .map { try $0.decode(String.self) }.sorted()
            let owners = try await session.rows("SELECT DISTINCT owner FROM cart_line WHERE productId = ANY(\(deleted))")
                .map { try $0.decode(String.self) }.sorted()
            // Their categories' counts, in id order (as moves lock them).
            for row in try await session.rows("""
                SELECT categoryId, COUNT(*) FROM product WHERE id = ANY(\(deleted)) GROUP BY categoryId ORDER BY categoryId
                """) {
                let (categoryId, count) = try row.decode((String, Int64).self)
                try await PostgresCategoryCounts.add(-count, to: categoryId, session)
            }
            // Cart lines, favourites and price points go with the products (ON DELETE CASCADE).
            try await session.execute("DELETE FROM product WHERE id = ANY(\(deleted))")
            try await PostgresIdempotency.record(session, key, at: now)
            guard !deleted.isEmpty else { return [] }
            // Every cart that lost lines changed: a new revision each, then the entries (the deletion's first,
            // then one per cart), last.
            var carts: [(Shopper, Cart)] = []
            for shopper in owners.compactMap(Shopper.init(storageKey:)) {
                try await PostgresRows.bumpCartRevision(session, of: shopper)
                carts.append((shopper, try await PostgresRows.cart(session, of: shopper)))
            }
            var entries: PostgresInboxRows.Entries = [
                (try await PostgresChangeLog.append(session, .productsDeleted, deleted.joined(separator: ","), at: now), [.productsDeleted(deleted)]),
            ]
            for (shopper, cart) in carts {
                entries.append((try await PostgresChangeLog.append(session, .cart, shopper.storageKey, at: now), [.cartChanged(cart, shopper: shopper)]))
            }
            return entries
        }
        await feed.committed(entries)
    }

    /// Changes product `id` (keyed by ``IdempotencyKey/current``) and stores the change with
    /// ``PostgresProductChange``; publishes its entries after the commit. A change that changes nothing
    /// writes nothing.
    /// - Throws: ``ShopError`` `productNotFound`, `validationFailed` or `categoryNotFound`.
    func update(id: String, _ update: ProductUpdate) async throws -> Product {
        let now = now()
        let key = IdempotencyKey.current
        let (product, entries) = try await database.write { session -> (Product, PostgresInboxRows.Entries) in
            // Locked before it is read: the version compared against is the one replaced.
            guard let old = try await PostgresProductChange.lockedProduct(session, id: id) else { throw ShopError.productNotFound(id) }
            if case .replay = try await PostgresIdempotency.check(session, key) { return (old, []) }
            let new = update.applied(to: old)
            let errors = ProductRules.errors(for: new)
            guard errors.isEmpty else { throw ShopError.validationFailed(errors) }
            if new.categoryId != old.categoryId, try await !Self.categoryExists(session, new.categoryId) {
                throw ShopError.categoryNotFound(new.categoryId)
            }
            try await PostgresIdempotency.record(session, key, outcome: ["productId": id], at: now)
            guard new != old else { return (old, []) }
            return (new, try await PostgresProductChange.store(session, from: old, to: new, at: now))
        }
        await feed.committed(entries)
        return product
    }

    /// The last `limit` price points of a product, oldest first.
    /// - Throws: ``ShopError`` `productNotFound`.
    func priceHistory(productId: String, limit: Int) async throws -> [PricePoint] {
        let history = try await database.snapshot { session -> [PricePoint]? in
            guard try await session.execute("SELECT 1 FROM product WHERE id = \(productId)") > 0 else { return nil }
            return try await PostgresPriceHistory.history(session, productId: productId, limit: limit)
        }
        guard let history else { throw ShopError.productNotFound(productId) }
        return history
    }

    /// Whether category `id` exists.
    private static func categoryExists(_ session: PostgresSession, _ id: String) async throws -> Bool {
        try await session.execute("SELECT 1 FROM category WHERE id = \(id)") > 0
    }
}
