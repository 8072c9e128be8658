import Foundation
@testable import PostgresStore
import Shop
@testable import ShopStore
import Testing

/// The PostgreSQL catalog against the SQLite one: the same calls on the same demo catalog give the same
/// pages, products, events and change-log entries; and what only PostgreSQL has to get right, several
/// servers changing one product at once.
@MainActor
@Suite(.enabled(if: TestPostgres.isAvailable, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster to test against (scripts/test.sh starts one)"))
struct PostgresCatalogTests {
    @Test func pagesCategoriesAndFeaturedAreTheSQLiteStores() async throws {
        let twins = try await CatalogTwins.make()
        var compared = 0
        for categoryId in [nil, "books", "office"] {
            for sort in [ProductSort.name, .price, .newest] {
                for (offset, limit) in [(0, 20), (7, 20), (230, 20), (0, 500), (-5, 3), (3, -1)] {
                    let query = ProductQuery(categoryId: categoryId, sort: sort, offset: offset, limit: limit)
                    let page = try await twins.postgres.catalog.page(query)
                    #expect(page == (try await twins.sqlite.catalog.page(query)), "\(query)")
                    compared += 1
                }
            }
        }
        #expect(compared == 54)
        let everything = try await twins.postgres.catalog.page(ProductQuery(limit: 500))
        #expect(everything.products.count == ProductPageWindow.maximumPageSize && everything.totalCount == DemoCatalog.defaultProductCount)
        #expect(try await twins.postgres.catalog.categories() == (try await twins.sqlite.catalog.categories()))
        for limit in [0, 5, 500, -1] {
            #expect(try await twins.postgres.catalog.featured(limit: limit) == (try await twins.sqlite.catalog.featured(limit: limit)))
        }
        #expect(try await twins.postgres.catalog.product(id: "p-0042") == (try await twins.sqlite.catalog.product(id: "p-0042")))
    }

    /// A page found by sorting the matches is in the order of one found by walking the sort's index.
    @Test func bothPlansOrderAPageAlike() async throws {
        let database = try await TestPostgres.freshDatabase()
        // Ties in every sort: the same name in two cases, the same price, the same date.
        _ = try await database.write { session in
            try await session.execute("UPDATE product SET name = 'same thing', price = 500, createdAt = 0 WHERE seq % 3 = 0")
            try await session.execute("UPDATE product SET name = 'Same Thing' WHERE seq % 6 = 0")
        }
        for sort in [ProductSort.name, .price, .newest] {
            var orders: [[String]] = []
            for alongIndex in [true, false] {
                let clause = PostgresCatalogService.orderClause(sort, alongIndex: alongIndex)
                orders.append(try await database.read { session in
                    try await session.rows("SELECT p.id FROM product p ORDER BY \(unescaped: clause)").map { try $0.decode(String.self) }
                })
            }
            #expect(orders[0] == orders[1], "\(sort)")
            #expect(orders[0].count == DemoCatalog.defaultProductCount)
        }
    }

    @Test func unknownProductsAreNotFound() async throws {
        let twins = try await CatalogTwins.make()
        await #expect(throws: ShopError.productNotFound("p-9999")) { try await twins.postgres.catalog.product(id: "p-9999") }
        await #expect(throws: ShopError.productNotFound("p-9999")) { try await twins.postgres.catalog.priceHistory(productId: "p-9999", limit: 5) }
        await #expect(throws: ShopError.productNotFound("p-9999")) {
            try await twins.postgres.catalog.update(id: "p-9999", ProductUpdate(stock: 1))
        }
    }

    @Test func createdProductsAreValidatedStoredAndPublishedAsInSQLite() async throws {
        let twins = try await CatalogTwins.make()
        let new = NewProduct(name: "  Walnut Desk Organiser ", description: "Five trays.", price: Money(minorUnits: 2_450), categoryId: "office")
        let created = try await twins.postgres.catalog.create(new)
        #expect(created == (try await twins.sqlite.catalog.create(new)))
        #expect(created.name == "Walnut Desk Organiser" && created.id == "p-0241")
        #expect(try await twins.postgres.catalog.product(id: created.id) == created)
        #expect(try await twins.postgres.catalog.priceHistory(productId: created.id, limit: 10)
            == (try await twins.sqlite.catalog.priceHistory(productId: created.id, limit: 10)))

        // A retry with the same key returns the product created the first time, and creates nothing.
        let key = IdempotencyKey(key: "create-1", fingerprint: "catalog/create walnut")
        let first = try await IdempotencyKey.$current.withValue(key) { try await twins.postgres.catalog.create(new) }
        let again = try await IdempotencyKey.$current.withValue(key) { try await twins.postgres.catalog.create(new) }
        #expect(first == again && first.id == "p-0242")
        #expect(try await twins.postgres.database.productCount() == DemoCatalog.defaultProductCount + 2)

        var invalid = new
        invalid.name = "x"
        invalid.price = Money(minorUnits: 0)
        let refused = try #require(await #expect(throws: ShopError.self) { try await twins.sqlite.catalog.create(invalid) })
        await #expect(throws: refused) { try await twins.postgres.catalog.create(invalid) }
        invalid = new
        invalid.categoryId = "spaceships"
        await #expect(throws: ShopError.categoryNotFound("spaceships")) { try await twins.postgres.catalog.create(invalid) }

        #expect(twins.postgres.published.events == [.productCreated(created), .productCreated(first)])
        #expect(try await twins.postgres.logEntries() == [.init(.productCreated, "p-0241"), .init(.productCreated, "p-0242")])
    }

    /// A product favourited by an account with notifications on and held in a guest's cart runs out, comes
    /// back cheaper in another category, then is renamed: the same events, entries, price points and carts
    /// as in SQLite.
    @Test func updatesStorePointsRevisionsNotificationsAndEntriesAsInSQLite() async throws {
        let twins = try await CatalogTwins.make()
        let account = Shopper.account(1)
        let guest = Shopper.guest("g1")
        let id = try await twins.inStock(1)[0]
        let original = try await twins.postgres.catalog.product(id: id)
        try await twins.addAccount()
        try await twins.onBoth { services in
            try await services.favorites.setFavorite(productId: id, isFavorite: true, for: account)
            _ = try await services.cart.add(productId: id, quantity: 1, for: guest)
        }
        let steps = [
            ProductUpdate(stock: 0),
            ProductUpdate(price: Money(minorUnits: 99), categoryId: original.categoryId == "office" ? "books" : "office", stock: 4),
            ProductUpdate(name: "  Renamed Thing "),
            ProductUpdate(description: "Only the description."),
            ProductUpdate(stock: 4),  // nothing changes: no entry, no point
        ]
        for update in steps {
            let product = try await twins.postgres.catalog.update(id: id, update)
            #expect(product == (try await twins.sqlite.catalog.update(id: id, update)))
        }
        #expect(twins.postgres.published.events == twins.sqlitePublished.events)
        #expect(try await twins.postgres.logEntries() == (try await twins.sqliteLogEntries()))
        #expect(try await twins.postgres.logEntries().map(\.kind) == [
            "favorite", "cart", "productChanged", "productChanged", "productMoved", "productRestocked", "notification", "notification",
            "productChanged", "productChanged",
        ])
        #expect(try await twins.postgres.catalog.priceHistory(productId: id, limit: 10)
            == (try await twins.sqlite.catalog.priceHistory(productId: id, limit: 10)))
        #expect(try await twins.postgres.cart.cart(of: guest) == (try await twins.sqlite.cart.cart(of: guest)))
        #expect(try await twins.postgres.cart.cart(of: guest).revision == 3)  // added, then its price (and category), then its name

        await #expect(throws: ShopError.categoryNotFound("spaceships")) {
            try await twins.postgres.catalog.update(id: id, ProductUpdate(categoryId: "spaceships"))
        }
        let refused = try #require(await #expect(throws: ShopError.self) {
            try await twins.sqlite.catalog.update(id: id, ProductUpdate(price: Money(minorUnits: -1), stock: -2))
        })
        await #expect(throws: refused) {
            try await twins.postgres.catalog.update(id: id, ProductUpdate(price: Money(minorUnits: -1), stock: -2))
        }
    }

    @Test func deletingProductsChangesTheCartsThatHeldThemAsInSQLite() async throws {
        let twins = try await CatalogTwins.make()
        let ids = try await twins.inStock(3)
        try await twins.onBoth { services in
            _ = try await services.cart.add(productId: ids[0], quantity: 1, for: .guest("b"))
            _ = try await services.cart.add(productId: ids[1], quantity: 1, for: .guest("a"))
            _ = try await services.cart.add(productId: ids[2], quantity: 1, for: .guest("a"))
        }
        for ids in [[ids[2], ids[0], ids[1], ids[0], "p-9999"], [], ["p-9999"]] {
            try await twins.postgres.catalog.delete(ids: ids)
            try await twins.sqlite.catalog.delete(ids: ids)
        }
        #expect(twins.postgres.published.events == twins.sqlitePublished.events)
        #expect(try await twins.postgres.logEntries() == (try await twins.sqliteLogEntries()))
        #expect(try await twins.postgres.logEntries().suffix(3) == [
            .init(.productsDeleted, ids.joined(separator: ",")), .init(.cart, Shopper.guest("a").storageKey), .init(.cart, Shopper.guest("b").storageKey),
        ])
        #expect(try await twins.postgres.database.productCount() == DemoCatalog.defaultProductCount - 3)
        #expect(try await twins.postgres.cart.cart(of: .guest("a")).isEmpty)
    }

    /// Two servers change one product at once, one its stock and the other its price, each many times: the
    /// product ends with both last values, and no price point ever goes back to a value the other server
    /// had already replaced (which an update that read the product before the other's commit would write).
    @Test func concurrentUpdatesFromTwoServersLoseNothing() async throws {
        let url = try await TestPostgres.freshURL()
        let first = CatalogServer(try await TestPostgres.open(url: url))
        let second = CatalogServer(try await TestPostgres.open(url: url))
        let id = "p-0020"
        _ = try await first.database.write { session in
            try await session.execute("UPDATE product SET stock = 0, price = 1000 WHERE id = \(id)")
        }
        let rounds = 15
        let stocking = Task { @MainActor in
            for stock in 1...rounds { _ = try await first.catalog.update(id: id, ProductUpdate(stock: stock)) }
        }
        let pricing = Task { @MainActor in
            for cents in 1...rounds { _ = try await second.catalog.update(id: id, ProductUpdate(price: Money(minorUnits: 1000 + Int64(cents)))) }
        }
        try await stocking.value
        try await pricing.value

        let product = try await first.catalog.product(id: id)
        #expect(product.stock == rounds && product.price == Money(minorUnits: 1000 + Int64(rounds)))
        let points = try await first.catalog.priceHistory(productId: id, limit: 1_000).suffix(2 * rounds)
        #expect(points.count == 2 * rounds)
        #expect(zip(points, points.dropFirst()).allSatisfy { $0.stock <= $1.stock && $0.price <= $1.price })
        #expect(try await first.logEntries().filter { $0.kind == "productChanged" }.count == 2 * rounds)
    }

    /// Each product's points and their kept count ("productId points rows"), for the products given.
    func historyCounts(_ database: PostgresShopDatabase, _ ids: [String]) async throws -> [String] {
        try await database.read { session in
            try await session.rows("""
                SELECT h.productId || ' ' || h.points || ' ' || (SELECT COUNT(*) FROM price_point p WHERE p.productId = h.productId)
                FROM price_history h WHERE h.productId = ANY(\(ids)) ORDER BY h.productId
                """).map { try $0.decode(String.self) }
        }
    }

    @Test func theHistoryKeepsItsLastThousandPointsByItsCountAndTheCountGoesWithTheProduct() async throws {
        let database = try await TestPostgres.freshDatabase()
        let product = try #require(try await database.read { try await PostgresRows.product($0, id: "p-0006") })
        _ = try await database.write { session in
            for step in 0..<1_100 {
                var next = product
                next.price = Money(minorUnits: 100 + Int64(step))
                try await PostgresPriceHistory.record(session, next, at: Date(timeIntervalSince1970: 1_750_000_000))
            }
        }
        // The migration's first point and 1 100, less the oldest 101.
        #expect(try await historyCounts(database, ["p-0005", "p-0006"]) == ["p-0005 1 1", "p-0006 1000 1000"])
        let history = try await database.read { try await PostgresPriceHistory.history($0, productId: "p-0006", limit: 5_000) }
        #expect(history.first?.price == Money(minorUnits: 200) && history.last?.price == Money(minorUnits: 1_199))

        _ = try await database.write { try await $0.execute("DELETE FROM product WHERE id = 'p-0006'") }
        #expect(try await historyCounts(database, ["p-0006"]) == [])

        // Back to the schema before the counts, the points kept: opening counts them.
        _ = try await TestPostgres.execute("DROP TABLE price_history", on: database.url)
        _ = try await TestPostgres.execute("DELETE FROM storefront_migrations WHERE identifier = 'v9-price-history-counts'", on: database.url)
        let reopened = try await TestPostgres.open(url: database.url)
        #expect(try await historyCounts(reopened, ["p-0005", "p-0006"]) == ["p-0005 1 1"])
    }

    @Test func categoryCountsFollowCreationMovesDeletionAndSeedingAsInSQLite() async throws {
        let twins = try await CatalogTwins.make()
        let extra = NewProduct(name: "Extra Product", description: "", price: Money(minorUnits: 100), categoryId: "books")
        for catalog in [twins.postgres.catalog as any CatalogService, twins.sqlite.catalog] {
            let created = try await catalog.create(extra)
            _ = try await catalog.update(id: created.id, ProductUpdate(categoryId: "toys"))
            try await catalog.delete(ids: ["p-0001", "p-0002", "p-0050", "p-0120", "p-9999"])
        }
        let categories = try await twins.postgres.catalog.categories()
        #expect(categories == (try await twins.sqlite.catalog.categories()))
        let counted = try await twins.postgres.database.read { session in
            try await session.rows("SELECT categoryId, COUNT(*) FROM product GROUP BY categoryId ORDER BY categoryId")
                .map { try $0.decode((String, Int).self) }
        }
        let kept = Dictionary(uniqueKeysWithValues: categories.map { ($0.category.id, $0.productCount) })
        #expect(kept.filter { $0.value > 0 } == Dictionary(uniqueKeysWithValues: counted))
        for category in categories {
            let page = try await twins.postgres.catalog.page(ProductQuery(categoryId: category.category.id, limit: 1))
            #expect(page.totalCount == category.productCount)
        }
        #expect(try await twins.postgres.catalog.page(ProductQuery(limit: 1)).totalCount == DemoCatalog.defaultProductCount + 1 - 4)

        try await twins.postgres.database.seed(products: 300)
        #expect(try await twins.postgres.catalog.categories().map(\.productCount).reduce(0, +) == 300)
    }

    @Test func aCheckoutRecordsEachProductBoughtWithItsStockAfterAsInSQLite() async throws {
        let twins = try await CatalogTwins.make()
        let shopper = Shopper.account(1)
        let ids = try await twins.inStock(2)
        let before = try await twins.postgres.catalog.page(ProductQuery(limit: ProductPageWindow.maximumPageSize)).products
        try await twins.onBoth { services in
            _ = try await services.cart.add(productId: ids[1], quantity: 1, for: shopper)
            _ = try await services.cart.add(productId: ids[0], quantity: 2, for: shopper)
            _ = try await services.orders.placeOrder(expectedRevision: nil, for: shopper)
        }
        for (id, bought) in [(ids[0], 2), (ids[1], 1)] {
            let history = try await twins.postgres.catalog.priceHistory(productId: id, limit: 10)
            #expect(history == (try await twins.sqlite.catalog.priceHistory(productId: id, limit: 10)), "\(id)")
            let stock = try #require(before.first { $0.id == id }).stock
            #expect(history.last?.stock == stock - bought, "\(id)")
        }
    }

    @Test func recommendationsAreTheSQLiteStores() async throws {
        let twins = try await CatalogTwins.make()
        let recommendations = PostgresRecommendationService(database: twins.postgres.database)
        let shopper = Shopper.account(3)
        let newcomer = Shopper.guest("new")
        #expect(try await recommendations.recommendations(limit: 6, for: newcomer)
            == (try await twins.sqlite.recommendations.recommendations(limit: 6, for: newcomer)))
        let ids = try await twins.inStock(2)
        try await twins.onBoth { services in
            try await services.favorites.setFavorite(productId: ids[0], isFavorite: true, for: shopper)
            _ = try await services.cart.add(productId: ids[1], quantity: 1, for: shopper)
            _ = try await services.orders.placeOrder(expectedRevision: nil, for: shopper)
        }
        for limit in [0, 4, 60, 300] {
            let suggested = try await recommendations.recommendations(limit: limit, for: shopper)
            #expect(suggested == (try await twins.sqlite.recommendations.recommendations(limit: limit, for: shopper)), "limit \(limit)")
            #expect(!suggested.contains { ids.contains($0.id) })
        }
    }
}

// MARK: - Support

/// One server's catalog over a PostgreSQL database, with the services a scenario needs beside it and the
/// events it published.
@MainActor
struct CatalogServer {
    let database: PostgresShopDatabase
    let events = ShopEvents()
    let feed: ChangeFeed
    let catalog: PostgresCatalogService
    let favorites: PostgresFavoritesService
    let cart: PostgresCartService
    let orders: PostgresOrderService
    let published: PostgresEventRecorder

    init(_ database: PostgresShopDatabase) {
        self.database = database
        feed = ChangeFeed(source: PostgresChangeLogSource(database: database), position: database.lastSeqAtOpen, events: events)
        catalog = PostgresCatalogService(database: database, feed: feed, now: { catalogTestNow })
        favorites = PostgresFavoritesService(database: database, feed: feed, now: { catalogTestNow })
        cart = PostgresCartService(database: database, feed: feed, now: { catalogTestNow })
        orders = PostgresOrderService(database: database, feed: feed, now: { catalogTestNow })
        published = PostgresEventRecorder(events)
    }

    /// The change-log entries written since the database was opened, oldest first, without their numbers.
    func logEntries() async throws -> [PostgresLogEntry] {
        try await database.read { [database] session in
            try await PostgresChangeLog.log(session, after: database.lastSeqAtOpen, limit: 10_000).entries
        }.map(PostgresLogEntry.init)
    }
}

/// The same demo catalog in both stores: a new PostgreSQL database and an in-memory SQLite one, dated by
/// the same fixed clock, so that the same calls must give equal results.
@MainActor
struct CatalogTwins {
    let postgres: CatalogServer
    let sqliteDatabase: ShopDatabase
    let sqlite: ShopServices
    let sqliteEvents: ShopEvents
    /// The SQLite store's published events.
    let sqlitePublished: PostgresEventRecorder

    /// The SQLite log's last entry when the twins were made.
    let sqliteLastSeqAtOpen: Int64

    private init(postgres: CatalogServer, sqliteDatabase: ShopDatabase) throws {
        self.postgres = postgres
        self.sqliteDatabase = sqliteDatabase
        sqliteLastSeqAtOpen = try sqliteDatabase.writer.read { try ChangeLog.lastSeq($0) }
        sqliteEvents = ShopEvents()
        sqlite = .live(database: sqliteDatabase, events: sqliteEvents, now: { catalogTestNow })
        sqlitePublished = PostgresEventRecorder(sqliteEvents)
    }

    static func make() async throws -> CatalogTwins {
        try CatalogTwins(postgres: CatalogServer(try await TestPostgres.freshDatabase()), sqliteDatabase: try ShopDatabase(path: ":memory:"))
    }

    /// Account 1, with notifications on, in both stores (inserted directly: accounts are not this suite's subject).
    func addAccount() async throws {
        _ = try await postgres.database.write { session in
            try await session.execute("INSERT INTO account (email, passwordHash, name, createdAt) VALUES ('a@example.com', 'x', 'A', 0)")
        }
        try await sqliteDatabase.writer.write { db in
            try db.execute(sql: "INSERT INTO account (email, passwordHash, name, createdAt) VALUES ('a@example.com', 'x', 'A', 0)")
        }
    }

    /// The first `count` products in stock (id order), the same in both stores.
    func inStock(_ count: Int) async throws -> [String] {
        let products = try await postgres.catalog.page(ProductQuery(limit: ProductPageWindow.maximumPageSize)).products
        return Array(products.filter { $0.stock > 1 }.map(\.id).sorted().prefix(count))
    }

    /// Runs `body` with each store's services: PostgreSQL's first.
    func onBoth(_ body: (Services) async throws -> Void) async throws {
        try await body(Services(favorites: postgres.favorites, cart: postgres.cart, orders: postgres.orders))
        try await body(Services(favorites: sqlite.favorites, cart: sqlite.cart, orders: sqlite.orders))
    }

    /// The services of one store that set up a scenario.
    struct Services {
        let favorites: any FavoritesService
        let cart: any CartService
        let orders: any OrderService
    }

    /// The change-log entries the SQLite store wrote since it was opened (its migrations write one), oldest
    /// first, without their numbers.
    func sqliteLogEntries() async throws -> [PostgresLogEntry] {
        try await sqliteDatabase.writer.read { [sqliteLastSeqAtOpen] db in
            try ChangeLog.entries(db, after: sqliteLastSeqAtOpen, limit: 10_000)
        }.map(PostgresLogEntry.init)
    }
}

extension PostgresLogEntry {
    /// An entry of either store's log, without its number (numbers may differ between stores that agree on
    /// everything else).
    init(_ entry: ChangeLog.Entry) {
        self.init(kind: entry.kind?.rawValue ?? "", subject: entry.subject)
    }

    /// An entry of `kind` about `subject`.
    init(_ kind: ChangeLog.Kind, _ subject: String) {
        self.init(kind: kind.rawValue, subject: subject)
    }
}

/// The fixed date every test service dates its changes with, so both stores store the same values.
let catalogTestNow = Date(timeIntervalSince1970: 1_750_000_000)
