import PostgresNIO

/// Each category's number of products (`category.productCount`) on PostgreSQL, kept as the SQLite store keeps
/// it (`CategoryCounts`): by the writes that add, delete or move products, in their transactions. A writer
/// changes counts after locking its products, and several categories in id order.
enum PostgresCategoryCounts {
    /// Counts every category's products again (the migration, and after the catalog is replaced).
    static let recountSQL = "UPDATE category c SET productCount = (SELECT COUNT(*) FROM product p WHERE p.categoryId = c.id)"

    /// Counts every category's products again.
    static func recount(_ session: PostgresSession) async throws {
        try await session.execute(PostgresQuery(unsafeSQL: recountSQL))
    }

    /// Adds `change` (negative: removes) to the count of category `id`.
    static func add(_ change: Int64, to id: String, _ session: PostgresSession) async throws {
        try await session.execute("UPDATE category SET productCount = productCount + \(change) WHERE id = \(id)")
    }
}
