import GRDB

/// Each category's number of products (`category.productCount`), kept by the writes that add, delete or
/// move products, in their transactions, so that the list of categories with their counts is read in
/// constant time however large the catalog (it was a `COUNT(*)` per category: ~50 ms at 1 000 000 products).
enum CategoryCounts {
    /// Migration `v10-category-counts`: the column, counted from the products stored.
    static func migrate(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE category ADD COLUMN productCount INTEGER NOT NULL DEFAULT 0 CHECK (productCount >= 0)")
        try recount(db)
    }

    /// Counts every category's products again (after the catalog is replaced).
    static func recount(_ db: Database) throws {
        try db.execute(sql: "UPDATE category SET productCount = (SELECT COUNT(*) FROM product p WHERE p.categoryId = category.id)")
    }

    /// How many products category `id` has, or the whole catalog when `id` is nil (0 for an unknown category).
    static func products(_ db: Database, in id: String?) throws -> Int {
        if let id {
            return try Int.fetchOne(db.cachedStatement(sql: "SELECT productCount FROM category WHERE id = ?"), arguments: [id]) ?? 0
        }
        return try Int.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(SUM(productCount), 0) FROM category")) ?? 0
    }

    /// Adds `change` (negative: removes) to the count of category `id`.
    static func add(_ change: Int, to id: String, _ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE category SET productCount = productCount + ? WHERE id = ?").execute(arguments: [change, id])
    }
}
