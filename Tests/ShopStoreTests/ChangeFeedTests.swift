import Foundation
import GRDB
import Shop
import Testing
@testable import ShopStore

/// The change log and the feed that follows it: two sets of services on one file stand for two servers.
@Suite @MainActor struct ChangeFeedTests {
    @Test func anotherConnectionsCommitsArePublishedInLogOrderWhenTheFeedCatchesUp() async throws {
        let folder = try TemporaryFolder()
        let writer = ShopServices.testing(try ShopDatabase(path: folder.databasePath))
        let database = try ShopDatabase(path: folder.databasePath)
        let events = ShopEvents()
        let feed = ChangeFeed(database: database, events: events)
        let recorder = EventRecorder(events)

        let cart = try await writer.cart.add(productId: "p-0001", quantity: 2, for: .testShopper)
        try await writer.favorites.setFavorite(productId: "p-0002", isFavorite: true, for: .testShopper)
        let order = try await writer.orders.placeOrder(expectedRevision: cart.revision, for: .testShopper)
        #expect(recorder.events.isEmpty)  // nothing is published before the feed reads the log

        await feed.catchUp()
        // In log order; the cart is read once, when its last entry is published (the others would show it too).
        let emptied = try await writer.cart.cart(of: .testShopper)
        #expect(recorder.events == [
            .favoriteChanged(productId: "p-0002", isFavorite: true, shopper: .testShopper), .cartChanged(emptied, shopper: .testShopper), .orderPlaced(order, shopper: .testShopper),
        ])
        await feed.catchUp()
        #expect(recorder.events.count == 3)  // each entry once
    }

    /// Another process's change of a cart, an account or an inbox's count is read only when a session here
    /// shows its shopper; what every session shows (orders: their stock) is read whoever's it is.
    @Test func anotherProcesssChangesOfShoppersNobodyHereShowsAreNotRead() async throws {
        let folder = try TemporaryFolder()
        let writer = ShopServices.testing(try ShopDatabase(path: folder.databasePath))
        let database = try ShopDatabase(path: folder.databasePath)
        let shown = ShownShoppers()
        shown.show(.guest("here"))
        let events = ShopEvents(shownShoppers: shown)
        let feed = ChangeFeed(database: database, events: events)
        let recorder = EventRecorder(events)

        let mine = try await writer.cart.add(productId: "p-0001", quantity: 1, for: .guest("here"))
        let theirs = try await writer.cart.add(productId: "p-0002", quantity: 1, for: .testShopper)
        let order = try await writer.orders.placeOrder(expectedRevision: theirs.revision, for: .testShopper)
        await feed.catchUp()
        #expect(recorder.events == [.cartChanged(mine, shopper: .guest("here")), .orderPlaced(order, shopper: .testShopper)])

        // Shown from now on: its next change is read.
        shown.show(.testShopper)
        let again = try await writer.cart.add(productId: "p-0003", quantity: 1, for: .testShopper)
        await feed.catchUp()
        #expect(recorder.events.last == .cartChanged(again, shopper: .testShopper))
    }

    @Test func readingsSkipOnlyOneShoppersDataThatNobodyHereShows() {
        let shown = ShownShoppers()
        shown.show(.guest("here"))
        let entries = [
            ChangeLog.Entry(seq: 1, kind: .cart, subject: Shopper.guest("here").storageKey),
            ChangeLog.Entry(seq: 2, kind: .cart, subject: Shopper.account(2).storageKey),
            ChangeLog.Entry(seq: 3, kind: .account, subject: "2"),
            ChangeLog.Entry(seq: 4, kind: .notificationsRead, subject: ChangeLog.notificationsReadSubject(owner: .account(2), ids: ["n-1"])),
            ChangeLog.Entry(seq: 5, kind: .order, subject: "o-000001"),
            ChangeLog.Entry(seq: 6, kind: .productChanged, subject: "p-0001"),
        ]
        #expect(ChangeLog.readings(of: entries, knownSeqs: [], shown: shown) == [
            .read(.cart(.guest("here"))), .notShown, .notShown, .notShown, .read(.order(id: "o-000001")), .read(.productChanged(id: "p-0001")),
        ])
        #expect(ChangeLog.readings(of: entries, knownSeqs: []).allSatisfy { if case .read = $0 { true } else { false } })
    }

    @Test func ownCommitsArePublishedBeforeTheServiceReturnsAndOnlyOnce() async throws {
        let folder = try TemporaryFolder()
        let events = ShopEvents()
        let services = ShopServices.testing(try ShopDatabase(path: folder.databasePath), events: events)
        let recorder = EventRecorder(events)
        let cart = try await services.cart.add(productId: "p-0001", quantity: 1, for: .testShopper)
        #expect(recorder.events == [.cartChanged(cart, shopper: .testShopper)])
        let product = try await services.catalog.create(
            NewProduct(name: "Log Lamp", description: "", price: Money(minorUnits: 990), categoryId: "home"))
        #expect(recorder.events == [.cartChanged(cart, shopper: .testShopper), .productCreated(product)])
    }

    @Test func aFollowerBehindThePrunedLogReloadsEverything() async throws {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.databasePath)
        let events = ShopEvents()
        let feed = ChangeFeed(database: database, events: events)
        let recorder = EventRecorder(events)
        let writer = ShopServices.testing(try ShopDatabase(path: folder.databasePath))
        // Three changes (each one flips the mark, so each writes an entry) this follower never reads.
        for isFavorite in [true, false, true] { try await writer.favorites.setFavorite(productId: "p-0003", isFavorite: isFavorite, for: .testShopper) }
        try await database.writer.write { db in
            try db.execute(sql: "DELETE FROM change_log")  // as pruning does to entries this follower never read
        }
        try await writer.favorites.setFavorite(productId: "p-0009", isFavorite: true, for: .testShopper)
        await feed.catchUp()
        #expect(recorder.events.first == .resync)
        #expect(recorder.events.last == .favoriteChanged(productId: "p-0009", isFavorite: true, shopper: .testShopper))
    }

    @Test func pruningKeepsTheNewestEntriesAndForgetsOldIdempotencyKeys() throws {
        let database = try ShopDatabase(path: ":memory:")
        let now = Date(timeIntervalSince1970: 2_000_000_000)
        try database.writer.write { db in
            for _ in 0..<30 { try ChangeLog.append(db, .cart, at: now.addingTimeInterval(-2 * ChangeLog.retention)) }
            try IdempotencyRecord.record(db, IdempotencyKey(key: "old", fingerprint: "f"), at: now.addingTimeInterval(-2 * ChangeLog.retention))
            try IdempotencyRecord.record(db, IdempotencyKey(key: "new", fingerprint: "f"), at: now)
            let last = try ChangeLog.append(db, .cart, at: now)
            try ChangeLog.prune(db, lastSeq: last, now: StoredDate.milliseconds(now))
            #expect(try ChangeLog.entries(db, after: 0, limit: 100).map(\.seq) == [last])
            #expect(try IdempotencyRecord.record(db, key: "old") == nil)
            #expect(try IdempotencyRecord.record(db, key: "new")?.fingerprint == "f")
        }
    }

    @Test func checkoutOfACartThatChangedSinceItWasShownPlacesNothing() async throws {
        let services = ShopServices.testing(try ShopDatabase(path: ":memory:"))
        let shown = try await services.cart.add(productId: "p-0004", quantity: 1, for: .testShopper)
        try await services.cart.add(productId: "p-0005", quantity: 1, for: .testShopper)  // another session's change
        let error = await #expect(throws: ShopError.self) { try await services.orders.placeOrder(expectedRevision: shown.revision, for: .testShopper) }
        #expect(error?.reason == "cartChanged")
        #expect(try await services.orders.recentOrders(limit: 5, of: .testShopper).isEmpty)
        #expect(try await services.cart.cart(of: .testShopper).itemCount == 2)
    }

    @Test func aKeyedChangeIsAppliedOnceAndItsKeyRefusesOtherParams() async throws {
        let services = ShopServices.testing(try ShopDatabase(path: ":memory:"))
        let key = IdempotencyKey(key: "k-1", fingerprint: "cart/add p-0006 x2")
        for _ in 0..<3 {
            try await IdempotencyKey.$current.withValue(key) { _ = try await services.cart.add(productId: "p-0006", quantity: 2, for: .testShopper) }
        }
        #expect(try await services.cart.cart(of: .testShopper).itemCount == 2)
        let other = IdempotencyKey(key: "k-1", fingerprint: "cart/add p-0007 x1")
        let error = await #expect(throws: ShopError.self) {
            try await IdempotencyKey.$current.withValue(other) { _ = try await services.cart.add(productId: "p-0007", quantity: 1, for: .testShopper) }
        }
        #expect(error?.reason == "idempotencyKeyReused")

        let pay = IdempotencyKey(key: "pay", fingerprint: "cart/checkout")
        let first = try await IdempotencyKey.$current.withValue(pay) { try await services.orders.placeOrder(expectedRevision: nil, for: .testShopper) }
        let again = try await IdempotencyKey.$current.withValue(pay) { try await services.orders.placeOrder(expectedRevision: nil, for: .testShopper) }
        #expect(again == first)
        #expect(try await services.orders.recentOrders(limit: 5, of: .testShopper).count == 1)
        #expect(try await services.idempotency.record(of: "pay")?.outcome == ["orderId": first.id])
    }
}
