import GRDB
import Shop

/// Tax rates per category, from the shop database.
struct LivePricingService: PricingService {
    let database: ShopDatabase

    func taxRate(categoryId: String) async throws -> Int {
        let rate = try await StorageError.mapping {
            try await database.writer.read { db in
                try Int.fetchOne(db, sql: "SELECT taxRate FROM category WHERE id = ?", arguments: [categoryId])
            }
        }
        guard let rate else { throw ShopError.categoryNotFound(categoryId) }
        return rate
    }

    func tax(for lines: [CartLine]) async throws -> Money {
        let rates = try await StorageError.mapping {
            try await database.writer.read { db in
                Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, taxRate FROM category").map {
                    ($0[0] as String, $0[1] as Int)
                })
            }
        }
        return try TaxRules.tax(lines.map { line in
            guard let rate = rates[line.categoryId] else { throw ShopError.categoryNotFound(line.categoryId) }
            return (line.lineTotal, rate)
        })
    }
}
