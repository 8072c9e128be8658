import PostgresNIO
import Shop
import ShopStore

/// Suggestions from a shopper's favourites and past orders over PostgreSQL, chosen as the SQLite store's
/// `LiveRecommendationService` chooses them: in-stock products of the categories the shopper favourited or
/// ordered from, that they have neither favourited nor ordered, featured first, then newest; topped up with
/// the other in-stock products in the same order when there are not enough.
struct PostgresRecommendationService: RecommendationService {
    let database: PostgresShopDatabase

    /// Suggestions read from `database`.
    init(database: PostgresShopDatabase) {
        self.database = database
    }

    /// Up to `limit` products `shopper` may like (see the type's description).
    func recommendations(limit: Int, for shopper: Shopper) async throws -> [Product] {
        let owner = shopper.storageKey
        let limit = max(limit, 0)
        // One snapshot: the top-up must not suggest again what the first read chose, as of the same moment.
        return try await database.snapshot { session in
            // What the shopper favourited or ordered, excluded from both reads.
            let seen = try await session.rows("""
                SELECT productId FROM favorite WHERE owner = \(owner)
                UNION SELECT l.productId FROM order_line l JOIN customer_order o ON o.id = l.orderId WHERE o.owner = \(owner)
                """).map { try $0.decode(String.self) }
            var products = try await PostgresRows.products(session, """
                SELECT \(unescaped: PostgresRows.productColumns) FROM product p
                WHERE p.stock > 0 AND p.categoryId IN (SELECT q.categoryId FROM product q WHERE q.id = ANY(\(seen)))
                  AND p.id <> ALL(\(seen))
                ORDER BY p.isFeatured DESC, p.createdAt DESC, p.id LIMIT \(limit)
                """)
            guard products.count < limit else { return products }
            products += try await PostgresRows.products(session, """
                SELECT \(unescaped: PostgresRows.productColumns) FROM product p
                WHERE p.stock > 0 AND p.id <> ALL(\(seen + products.map(\.id)))
                ORDER BY p.isFeatured DESC, p.createdAt DESC, p.id LIMIT \(limit - products.count)
                """)
            return products
        }
    }
}
