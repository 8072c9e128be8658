import Foundation
import GRDB
import Shop
import Testing
@testable import ShopStore

/// Each category's kept number of products (`category.productCount`): read by the category list and by an
/// unsearched page's total, kept by creating, deleting, moving and seeding products, and counted by the
/// migration.
@Suite @MainActor struct CategoryCountsTests {
    /// Each category's kept count and its products counted, as "id kept counted", by id.
    func counts(_ database: ShopDatabase) async throws -> [String] {
        try await database.writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id || ' ' || productCount || ' ' || (SELECT COUNT(*) FROM product p WHERE p.categoryId = category.id)
                FROM category ORDER BY id
                """).map { $0[0] as String }
        }
    }

    /// Whether every kept count equals its products counted.
    func countsAreRight(_ database: ShopDatabase) async throws -> Bool {
        try await counts(database).allSatisfy { line in
            let parts = line.split(separator: " ")
            return parts[1] == parts[2]
        }
    }

    @Test func theCountsFollowCreationDeletionMovesAndSeeding() async throws {
        let database = try ShopDatabase(path: ":memory:")
        let services = ShopServices.testing(database)
        #expect(try await countsAreRight(database))
        let before = try await services.catalog.categories()
        #expect(before.map(\.productCount).reduce(0, +) == DemoCatalog.defaultProductCount)

        let created = try await services.catalog.create(
            NewProduct(name: "Extra Product", description: "", price: Money(minorUnits: 100), categoryId: "books"))
        let books = try await services.catalog.categories().first { $0.category.id == "books" }
        #expect(books?.productCount == before.first { $0.category.id == "books" }!.productCount + 1)
        let moved = try await services.catalog.update(id: created.id, ProductUpdate(categoryId: "toys"))
        #expect(moved.categoryId == "toys")
        // Products of several categories deleted at once, one of them unknown.
        let page = try await services.catalog.page(ProductQuery(limit: 30))
        let doomed = Set(page.products.map(\.categoryId)).count
        #expect(doomed > 1)
        try await services.catalog.delete(ids: page.products.map(\.id) + ["p-9999"])
        #expect(try await countsAreRight(database))

        // An unsearched page's total is the kept count: of a category, and of the whole catalog.
        for category in try await services.catalog.categories() {
            #expect(try await services.catalog.page(ProductQuery(categoryId: category.category.id, limit: 1)).totalCount == category.productCount)
        }
        #expect(try await services.catalog.page(ProductQuery(limit: 1)).totalCount == DemoCatalog.defaultProductCount + 1 - 30)
        #expect(try await services.catalog.page(ProductQuery(categoryId: "nope", limit: 1)).totalCount == 0)

        try await database.seed(products: 500)
        #expect(try await countsAreRight(database))
        #expect(try await services.catalog.categories().map(\.productCount).reduce(0, +) == 500)
    }

    @Test func aDatabaseFromBeforeTheCountsHasThemCounted() async throws {
        let queue = try DatabaseQueue(configuration: ShopDatabase.configuration)
        try ShopSchema.migrator.migrate(queue, upTo: "v9-price-history-counts")
        try await queue.write { db in try db.execute(sql: "DELETE FROM product WHERE id IN ('p-0001', 'p-0002', 'p-0003')") }
        try ShopSchema.migrator.migrate(queue)
        let database = ShopDatabase(path: ":memory:", writer: queue)
        #expect(try await countsAreRight(database))
        let total = try await queue.read { db in try Int.fetchOne(db, sql: "SELECT SUM(productCount) FROM category") }
        #expect(total == DemoCatalog.defaultProductCount - 3)
    }
}
