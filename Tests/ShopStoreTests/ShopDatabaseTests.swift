import Foundation
import GRDB
import Shop
import Testing
@testable import ShopStore

@Suite struct ShopDatabaseTests {
    @Test func aFreshDatabaseHoldsTheDemoCatalog() async throws {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.databasePath)
        let services = ShopServices.testing(database)

        let categories = try await services.catalog.categories()
        #expect(categories.count >= 8)
        #expect(categories.map(\.productCount).reduce(0, +) == DemoCatalog.defaultProductCount)
        #expect(categories.allSatisfy { $0.productCount > 0 })

        let all = try await services.catalog.page(ProductQuery(limit: 200)).products
            + services.catalog.page(ProductQuery(offset: 200, limit: 200)).products
        #expect(all.count == 240)
        #expect(Set(all.map(\.id)).count == 240)
        #expect(all.contains { $0.stock == 0 })
        #expect(all.contains { $0.isFeatured })
        #expect(Set(all.map(\.maxPerOrder)).count > 3)
        #expect(Set(all.map(\.price)).count > 50)
        let first = try await services.catalog.product(id: "p-0001")
        #expect(first.id == "p-0001")
    }

    @Test func commitsAreSyncedToDiskBeforeTheyAreAcknowledged() async throws {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.databasePath)
        let (journal, synchronous) = try await database.writer.writeWithoutTransaction { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        #expect(journal == "wal")
        #expect(synchronous == 2)  // FULL: the log is synced at every commit.
    }

    @Test func aDatabaseWhoseOwnerSyncsCommitsWithoutSyncing() async throws {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.databasePath, logSyncing: .deferred)
        let synchronous = try await database.writer.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        #expect(synchronous == 1)  // NORMAL: the server syncs (WriteAheadLogSync) before it says anything.
        #expect(database.logSync != nil)
        // In memory there is nothing to sync.
        #expect(try ShopDatabase(path: ":memory:", logSyncing: .deferred).logSync == nil)
    }

    @Test func seedingIsDeterministicAcrossDatabases() async throws {
        let one = try ShopDatabase(path: ":memory:")
        let two = try ShopDatabase(path: ":memory:")
        let query = ProductQuery(sort: .newest, limit: 200)
        let a = try await ShopServices.testing(one).catalog.page(query)
        let b = try await ShopServices.testing(two).catalog.page(query)
        #expect(a == b)
        #expect(a.totalCount == 240)
    }

    @Test func anInMemoryCopyHasTheSameContentsAndChangesApart() async throws {
        let original = try ShopDatabase(path: ":memory:")
        try await ShopServices.testing(original).cart.add(productId: "p-0001", quantity: 2, for: .testShopper)
        let copy = try original.inMemoryCopy()
        let query = ProductQuery(searchText: "oak", sort: .newest, limit: 200)
        #expect(try await ShopServices.testing(copy).catalog.page(query) == ShopServices.testing(original).catalog.page(query))
        #expect(try await ShopServices.testing(copy).cart.cart(of: .testShopper).lines.map(\.quantity) == [2])
        #expect(try await copy.appliedMigrations() == original.appliedMigrations())

        try await ShopServices.testing(copy).cart.clear(for: .testShopper)
        #expect(try await ShopServices.testing(copy).cart.cart(of: .testShopper).lines.isEmpty)
        #expect(try await ShopServices.testing(original).cart.cart(of: .testShopper).lines.count == 1)
        #expect(copy.path == ":memory:")
    }

    @Test func seedMakesLargeCatalogsWithWiderIds() async throws {
        let database = try ShopDatabase(path: ":memory:")
        try await database.seed(products: 12_345)
        #expect(try await database.productCount() == 12_345)
        let catalog = ShopServices.testing(database).catalog
        let first = try await catalog.product(id: "p-00001")
        let last = try await catalog.product(id: "p-12345")
        #expect(last.createdAt > first.createdAt)
        // The search index was rebuilt with the new products.
        let page = try await catalog.page(ProductQuery(searchText: first.name, limit: 1))
        #expect(page.totalCount > 0)
        // Seeding again with the same count gives the same catalog.
        let before = try await catalog.page(ProductQuery(offset: 5_000, limit: 50))
        try await database.seed(products: 12_345)
        #expect(try await catalog.page(ProductQuery(offset: 5_000, limit: 50)) == before)
    }

    @Test func reopeningAppliesNoMigrationAgain() async throws {
        let folder = try TemporaryFolder()
        let first = try ShopDatabase(path: folder.databasePath)
        let migrations = try await first.appliedMigrations()
        #expect(migrations == ["v1-schema", "v1-demo-catalog", "v2-change-log", "v3-accounts", "v4-price-history", "v5-inbox", "v6-analytics", "v7-search-counts", "v8-inbox-counts", "v9-price-history-counts", "v10-category-counts", "v11-product-key-changes", "v12-search-counts-two-letters", "v13-search-walk-starts", "v14-lean-writes"])
        let services = ShopServices.testing(first)
        _ = try await services.catalog.create(
            NewProduct(name: "Extra Product", description: "", price: Money(minorUnits: 100), categoryId: "books"))

        let second = try ShopDatabase(path: folder.databasePath)
        try second.migrate()
        #expect(try await second.appliedMigrations() == migrations)
        // Not re-seeded: the created product is still the 241st.
        #expect(try await second.productCount() == 241)
    }

    @Test func cartFavouritesAndOrdersSurviveARestart() async throws {
        let folder = try TemporaryFolder()
        do {
            let services = ShopServices.testing(try ShopDatabase(path: folder.databasePath))
            try await services.cart.add(productId: "p-0002", quantity: 1, for: .testShopper)
            _ = try await services.orders.placeOrder(expectedRevision: nil, for: .testShopper)
            try await services.cart.add(productId: "p-0003", quantity: 1, for: .testShopper)
            try await services.favorites.setFavorite(productId: "p-0004", isFavorite: true, for: .testShopper)
        }
        let services = ShopServices.testing(try ShopDatabase(path: folder.databasePath))
        #expect(try await services.cart.cart(of: .testShopper).lines.map(\.productId) == ["p-0003"])
        #expect(try await services.favorites.isFavorite(productId: "p-0004", for: .testShopper))
        #expect(try await services.orders.recentOrders(limit: 10, of: .testShopper).map { $0.lines.map(\.productId) } == [["p-0002"]])
    }

    @Test func twoConnectionsToOneFileCanBothWrite() async throws {
        let folder = try TemporaryFolder()
        let one = ShopServices.testing(try ShopDatabase(path: folder.databasePath))
        let two = ShopServices.testing(try ShopDatabase(path: folder.databasePath))
        async let a: Void = { for _ in 0..<20 { try await one.favorites.setFavorite(productId: "p-0010", isFavorite: true, for: .testShopper) } }()
        async let b: Void = { for _ in 0..<20 { try await two.favorites.setFavorite(productId: "p-0011", isFavorite: true, for: .testShopper) } }()
        _ = try await (a, b)
        #expect(try await one.favorites.isFavorite(productId: "p-0010", for: .testShopper))
        #expect(try await one.favorites.isFavorite(productId: "p-0011", for: .testShopper))
    }

    @Test func processesOpeningANewFileTogetherBothSucceed() async throws {
        let folder = try TemporaryFolder()
        let path = folder.databasePath
        let opened = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask { try await ShopDatabase(path: path).productCount() }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(opened == [240, 240, 240, 240])
    }

    @Test func defaultPathFollowsXDGAndFallsBackToHome() throws {
        let folder = try TemporaryFolder()
        let xdg = try ShopDatabase.defaultPath(environment: ["XDG_DATA_HOME": folder.url.path + "/data"])
        #expect(xdg == folder.url.path + "/data/storefront/storefront.sqlite")
        #expect(FileManager.default.fileExists(atPath: folder.url.path + "/data/storefront"))
        let home = try ShopDatabase.defaultPath(environment: ["HOME": folder.url.path])
        #expect(home == folder.url.path + "/.local/share/storefront/storefront.sqlite")
    }
}
