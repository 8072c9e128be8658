import GRDB
import Shop

/// Suggestions from the customer's favourites and past orders, over the shop database.
struct LiveRecommendationService: RecommendationService {
    let database: ShopDatabase

    func recommendations(limit: Int) async throws -> [Product] {
        let limit = max(limit, 0)
        return try await StorageError.mapping {
            try await database.writer.read { db in
                let seen = "SELECT productId FROM favorite UNION SELECT productId FROM order_line"
                var products = try StoredRows.products(db, sql: """
                    SELECT \(StoredRows.productColumns) FROM product p
                    WHERE p.stock > 0
                      AND p.categoryId IN (SELECT q.categoryId FROM product q WHERE q.id IN (\(seen)))
                      AND p.id NOT IN (\(seen))
                    ORDER BY p.isFeatured DESC, p.createdAt DESC, p.id LIMIT ?
                    """, arguments: [limit])
                if products.count < limit {
                    let chosen = products.map(\.id)
                    let placeholders = chosen.isEmpty ? "''" : Array(repeating: "?", count: chosen.count).joined(separator: ",")
                    products += try StoredRows.products(db, sql: """
                        SELECT \(StoredRows.productColumns) FROM product p
                        WHERE p.stock > 0 AND p.id NOT IN (\(seen)) AND p.id NOT IN (\(placeholders))
                        ORDER BY p.isFeatured DESC, p.createdAt DESC, p.id LIMIT ?
                        """, arguments: StatementArguments(chosen) + [limit - products.count])
                }
                return products
            }
        }
    }
}
