import Foundation
import GRDB
import Shop
import Testing
@testable import ShopStore

/// Changing an existing product: validation, the price history, the change log, and keyed retries.
@Suite @MainActor struct ProductUpdateTests {
    @Test func aPriceChangeIsStoredWithAPricePointAndPublishedHereAndInAnotherServer() async throws {
        let folder = try TemporaryFolder()
        let now = MovableNow()
        let events = ShopEvents()
        let services = ShopServices.testing(try ShopDatabase(path: folder.databasePath), now: now, events: events)
        let otherDatabase = try ShopDatabase(path: folder.databasePath)
        let otherEvents = ShopEvents()
        let otherFeed = ChangeFeed(database: otherDatabase, events: otherEvents)
        let recorder = EventRecorder(events)
        let otherRecorder = EventRecorder(otherEvents)
        let before = try await services.catalog.product(id: "p-0001")

        now.advance(by: 60)
        let changed = try await services.catalog.update(id: "p-0001", ProductUpdate(price: Money(minorUnits: 1234), stock: 7))
        var expected = before
        expected.price = Money(minorUnits: 1234)
        expected.stock = 7
        #expect(changed == expected)
        #expect(try await services.catalog.product(id: "p-0001") == expected)
        #expect(recorder.events == [.productChanged(expected)])
        await otherFeed.catchUp()
        #expect(otherRecorder.events == [.productChanged(expected)])

        // The migration started the history with the product as it was; the change added a point.
        let history = try await services.catalog.priceHistory(productId: "p-0001", limit: 100)
        #expect(history == [
            PricePoint(price: before.price, stock: before.stock, at: before.createdAt),
            PricePoint(price: Money(minorUnits: 1234), stock: 7, at: fixedNow.addingTimeInterval(60)),
        ])
        #expect(try await services.catalog.priceHistory(productId: "p-0001", limit: 1) == [history[1]])
    }

    @Test func aCategoryMoveIsPublishedAfterTheChangeHereAndInAnotherServer() async throws {
        let folder = try TemporaryFolder()
        let events = ShopEvents()
        let services = ShopServices.testing(try ShopDatabase(path: folder.databasePath), events: events)
        let otherEvents = ShopEvents()
        let otherFeed = ChangeFeed(database: try ShopDatabase(path: folder.databasePath), events: otherEvents)
        let recorder = EventRecorder(events)
        let otherRecorder = EventRecorder(otherEvents)
        let before = try await services.catalog.product(id: "p-0001")
        let counts = try await services.catalog.categories()
        let target = try #require(counts.first { $0.id != before.categoryId })

        let moved = try await services.catalog.update(id: "p-0001", ProductUpdate(categoryId: target.id))
        let expected: [ShopEvent] = [
            .productChanged(moved), .productMoved(productId: "p-0001", from: before.categoryId, to: target.id),
        ]
        #expect(recorder.events == expected)
        await otherFeed.catchUp()
        #expect(otherRecorder.events == expected)
        let recounted = try await services.catalog.categories()
        #expect(recounted.first { $0.id == target.id }?.productCount == target.productCount + 1)
    }

    /// A product whose stock goes from 0 to more is published as back in stock after its change, here and in
    /// another server (whose change does not say what the stock was); other stock changes are not.
    @Test func aProductBackInStockIsPublishedAfterTheChangeHereAndInAnotherServer() async throws {
        let folder = try TemporaryFolder()
        let events = ShopEvents()
        let services = ShopServices.testing(try ShopDatabase(path: folder.databasePath), events: events)
        let otherEvents = ShopEvents()
        let otherFeed = ChangeFeed(database: try ShopDatabase(path: folder.databasePath), events: otherEvents)

        let soldOut = try await services.catalog.update(id: "p-0001", ProductUpdate(stock: 0))
        await otherFeed.catchUp()
        let recorder = EventRecorder(events)
        let otherRecorder = EventRecorder(otherEvents)
        let restocked = try await services.catalog.update(id: "p-0001", ProductUpdate(stock: 3))
        await otherFeed.catchUp()  // one change at a time: a later change of the product supersedes an earlier one
        let more = try await services.catalog.update(id: "p-0001", ProductUpdate(stock: 5))
        await otherFeed.catchUp()

        #expect(soldOut.stock == 0)
        let expected: [ShopEvent] = [.productChanged(restocked), .productRestocked(productId: "p-0001"), .productChanged(more)]
        #expect(recorder.events == expected)
        #expect(otherRecorder.events == expected)
    }

    @Test func aTextChangeWritesNoPricePointAndAnUnchangedUpdateNothing() async throws {
        let events = ShopEvents()
        let services = ShopServices.testing(try ShopDatabase(path: ":memory:"), events: events)
        let recorder = EventRecorder(events)
        let renamed = try await services.catalog.update(id: "p-0002", ProductUpdate(name: "  Renamed Thing  "))
        #expect(renamed.name == "Renamed Thing")
        #expect(try await services.catalog.priceHistory(productId: "p-0002", limit: 100).count == 1)
        _ = try await services.catalog.update(id: "p-0002", ProductUpdate(name: "Renamed Thing"))
        #expect(recorder.events == [.productChanged(renamed)])
        let hits = try await services.catalog.page(ProductQuery(searchText: "Renamed", limit: 10))
        #expect(hits.products.map(\.id) == ["p-0002"])
    }

    @Test func anInvalidChangeIsRefusedAndStoresNothing() async throws {
        let services = ShopServices.testing(try ShopDatabase(path: ":memory:"))
        let before = try await services.catalog.product(id: "p-0003")
        let error = await #expect(throws: ShopError.self) {
            _ = try await services.catalog.update(id: "p-0003", ProductUpdate(name: "x", price: Money(minorUnits: 0), stock: -1))
        }
        #expect(error?.reason == "validationFailed")
        #expect(Set(error?.details.keys.map { $0 } ?? []) == ["name", "price", "stock"])
        let missing = await #expect(throws: ShopError.self) {
            _ = try await services.catalog.update(id: "p-9999", ProductUpdate(stock: 1))
        }
        #expect(missing == .productNotFound("p-9999"))
        let category = await #expect(throws: ShopError.self) {
            _ = try await services.catalog.update(id: "p-0003", ProductUpdate(categoryId: "nowhere"))
        }
        #expect(category == .categoryNotFound("nowhere"))
        #expect(try await services.catalog.product(id: "p-0003") == before)
        await #expect(throws: ShopError.productNotFound("p-9999")) {
            _ = try await services.catalog.priceHistory(productId: "p-9999", limit: 10)
        }
    }

    @Test func aKeyedUpdateIsAppliedOnce() async throws {
        let services = ShopServices.testing(try ShopDatabase(path: ":memory:"))
        let key = IdempotencyKey(key: "u-1", fingerprint: "productForm/submit")
        for _ in 0..<3 {
            _ = try await IdempotencyKey.$current.withValue(key) {
                try await services.catalog.update(id: "p-0004", ProductUpdate(stock: 3))
            }
        }
        #expect(try await services.catalog.priceHistory(productId: "p-0004", limit: 100).count == 2)
    }

    @Test func checkoutWritesAPricePointPerProductBoughtAndTheHistoryKeepsTheLastThousand() async throws {
        let database = try ShopDatabase(path: ":memory:")
        let services = ShopServices.testing(database)
        let product = try await services.catalog.product(id: "p-0005")
        _ = try await services.cart.add(productId: "p-0005", quantity: 2, for: .testShopper)
        _ = try await services.orders.placeOrder(expectedRevision: nil, for: .testShopper)
        let history = try await services.catalog.priceHistory(productId: "p-0005", limit: 100)
        #expect(history.map(\.stock) == [product.stock, product.stock - 2])

        try await database.writer.write { db in
            var current = try #require(try StoredRows.product(db, id: "p-0006"))
            for step in 0..<1_100 {
                var next = current
                next.price = Money(minorUnits: 100 + Int64(step))
                _ = try ProductChangeRows.store(db, from: current, to: next, at: fixedNow)
                current = next
            }
        }
        let kept = try await services.catalog.priceHistory(productId: "p-0006", limit: 5_000)
        #expect(kept.count == PriceHistoryRows.maximumPointsPerProduct)
        #expect(kept.last?.price == Money(minorUnits: 100 + 1_099))
        // Its count is kept with the points: 1 000 (the migration's first point and 1 100 changes, less the oldest 101).
        let counts = try await database.writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id || ' ' || pricePoints || ' ' || (SELECT COUNT(*) FROM price_point p WHERE p.productId = product.id)
                FROM product WHERE id IN ('p-0005', 'p-0006') ORDER BY id
                """).map { $0[0] as String }
        }
        #expect(counts == ["p-0005 2 2", "p-0006 1000 1000"])
        let oldest: Int64 = try await database.writer.read { db in
            try Int64.fetchOne(db, sql: "SELECT price FROM price_point WHERE productId = 'p-0006' ORDER BY seq LIMIT 1") ?? 0
        }
        #expect(oldest == 200)  // the first 100 changes' prices (100...199) went

        // A checkout of a product whose history is full: its stock goes down once, by the quantity bought, in
        // the row and in the new point, and the history stays at its bound.
        let before = try await services.catalog.product(id: "p-0006")
        _ = try await services.cart.add(productId: "p-0006", quantity: 3, for: .testShopper)
        _ = try await services.orders.placeOrder(expectedRevision: nil, for: .testShopper)
        #expect(try await services.catalog.product(id: "p-0006").stock == before.stock - 3)
        let afterCheckout = try await services.catalog.priceHistory(productId: "p-0006", limit: 5_000)
        #expect(afterCheckout.count == PriceHistoryRows.maximumPointsPerProduct)
        #expect(afterCheckout.last?.stock == before.stock - 3)
        let countAfterCheckout = try await database.writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT pricePoints || ' ' || (SELECT COUNT(*) FROM price_point p WHERE p.productId = product.id)
                FROM product WHERE id = 'p-0006'
                """).map { $0[0] as String }
        }
        #expect(countAfterCheckout == ["1000 1000"])

        // A product created has its first point counted.
        let created = try await services.catalog.create(
            NewProduct(name: "Extra Product", description: "", price: Money(minorUnits: 100), categoryId: "books"))
        let createdPoints = try await database.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT pricePoints FROM product WHERE id = ?", arguments: [created.id])
        }
        #expect(createdPoints == 1)
    }

    @Test func aCheckoutOfSeveralProductsTakesEachOnesQuantityOffItsOwnStockAndPoint() async throws {
        let database = try ShopDatabase(path: ":memory:")
        let services = ShopServices.testing(database)
        let bought = ["p-0003": 1, "p-0005": 2]  // added in this order: the order's lines are not sorted by id
        var before: [String: Int] = [:]
        for (id, quantity) in bought.sorted(by: { $0.key > $1.key }) {
            before[id] = try await services.catalog.product(id: id).stock
            _ = try await services.cart.add(productId: id, quantity: quantity, for: .testShopper)
        }
        _ = try await services.orders.placeOrder(expectedRevision: nil, for: .testShopper)
        for (id, quantity) in bought {
            let expected = try #require(before[id]) - quantity
            #expect(try await services.catalog.product(id: id).stock == expected, "\(id)")
            let history = try await services.catalog.priceHistory(productId: id, limit: 100)
            #expect(history.map(\.stock) == [expected + quantity, expected], "\(id)")
        }
        let counts = try await database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT id || ' ' || pricePoints FROM product WHERE id IN ('p-0003', 'p-0005') ORDER BY id")
                .map { $0[0] as String }
        }
        #expect(counts == ["p-0003 2", "p-0005 2"])
    }

    @Test func aDatabaseFromBeforeTheHistoryCountsHasThemCounted() async throws {
        let queue = try DatabaseQueue(configuration: ShopDatabase.configuration)
        try ShopSchema.migrator.migrate(queue, upTo: "v8-inbox-counts")
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO price_point (productId, price, stock, at) VALUES ('p-0001', 1, 1, 0), ('p-0001', 2, 1, 0)")
        }
        try ShopSchema.migrator.migrate(queue)
        let counts = try await queue.read { db in
            try Row.fetchAll(db, sql: "SELECT id || ' ' || pricePoints FROM product WHERE id IN ('p-0001', 'p-0002') ORDER BY id")
                .map { $0[0] as String }
        }
        // The migration of v4 gave every product its first point.
        #expect(counts == ["p-0001 3", "p-0002 1"])
    }
}
