import GRDB
import Shop

/// Suggestions from a shopper's favourites and past orders, over the shop database.
struct LiveRecommendationService: RecommendationService {
    let database: ShopDatabase

    func recommendations(limit: Int, for shopper: Shopper) async throws -> [Product] {
        let owner = shopper.storageKey
        let limit = max(limit, 0)
        return try await StorageError.mapping {
            try await database.writer.read { db in
                // The shopper's favourites and ordered products (`?1` is the owner).
                let seen = """
                    SELECT productId FROM favorite WHERE owner = ?1
                    UNION SELECT l.productId FROM order_line l JOIN customer_order o ON o.id = l.orderId WHERE o.owner = ?1
                    """
                var products = try StoredRows.products(db, sql: """
                    SELECT \(StoredRows.productColumns) FROM product p
                    WHERE p.stock > 0
                      AND p.categoryId IN (SELECT q.categoryId FROM product q WHERE q.id IN (\(seen)))
                      AND p.id NOT IN (\(seen))
                    ORDER BY p.isFeatured DESC, p.createdAt DESC, p.id LIMIT ?2
                    """, arguments: [owner, limit])
                if products.count < limit {
                    let chosen = products.map(\.id)
                    let placeholders = chosen.isEmpty ? "''" : Array(repeating: "?", count: chosen.count).joined(separator: ",")
                    products += try StoredRows.products(db, sql: """
                        SELECT \(StoredRows.productColumns) FROM product p
                        WHERE p.stock > 0 AND p.id NOT IN (\(seen)) AND p.id NOT IN (\(placeholders))
                        ORDER BY p.isFeatured DESC, p.createdAt DESC, p.id LIMIT ?
                        """, arguments: [owner] + StatementArguments(chosen) + [limit - products.count])
                }
                return products
            }
        }
    }
}
