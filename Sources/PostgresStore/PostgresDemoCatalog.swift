import PostgresNIO
import Randomness
import Shop
import ShopStore

/// The demo catalog on PostgreSQL: the same generated products as the SQLite store's (`DemoCatalog`),
/// inserted a few thousand rows per statement (arrays unnested server-side).
enum PostgresDemoCatalog {
    /// The products of a new database.
    static let defaultProductCount = DemoCatalog.defaultProductCount
    /// Rows per INSERT.
    private static let chunk = 5_000

    /// Inserts the categories (when missing) and `productCount` products numbered from 1.
    static func insert(productCount: Int, into session: PostgresSession) async throws {
        for entry in DemoCatalog.categories {
            try await session.execute("""
                INSERT INTO category (id, name, taxRate) VALUES (\(entry.category.id), \(entry.category.name), \(entry.taxRate))
                ON CONFLICT (id) DO NOTHING
                """)
        }
        guard productCount > 0 else { return }
        var random = SeededRandom(seed: DemoCatalog.seed)
        let width = max(4, String(productCount).count)
        var number = 1
        while number <= productCount {
            let numbers = number...min(productCount, number + chunk - 1)
            let products = numbers.map { DemoCatalog.makeProduct(number: $0, of: productCount, idWidth: width, random: &random) }
            let seqs = numbers.map(Int64.init)
            let ids = products.map(\.id), names = products.map(\.name), descriptions = products.map(\.description)
            let prices = products.map(\.price.minorUnits), categories = products.map(\.categoryId)
            let stocks = products.map { Int64($0.stock) }, maxima = products.map { Int64($0.maxPerOrder) }
            let dates = products.map { StoredDate.milliseconds($0.createdAt) }, featured = products.map(\.isFeatured)
            try await session.execute("""
                INSERT INTO product (seq, id, name, description, price, categoryId, stock, maxPerOrder, createdAt, isFeatured)
                SELECT * FROM unnest(\(seqs), \(ids), \(names), \(descriptions), \(prices), \(categories), \(stocks), \(maxima), \(dates), \(featured))
                """)
            number = numbers.upperBound + 1
        }
        // Products created later are numbered after the seeded ones.
        try await session.execute("SELECT setval(pg_get_serial_sequence('product', 'seq'), GREATEST((SELECT MAX(seq) FROM product), 1))")
    }
}
