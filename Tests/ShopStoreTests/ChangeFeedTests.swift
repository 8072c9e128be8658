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
            // As pruning does to entries this follower never read (all but the newest, which numbers the next).
            try db.execute(sql: "DELETE FROM change_log WHERE seq < (SELECT MAX(seq) FROM change_log)")
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

    /// Age: the oldest entries up to the first young one (an old one after it, as another server's clock may
    /// write, waits), never the newest, which numbers the next entry. Count: all but the last
    /// ``ChangeLog/maximumEntries``.
    @Test func pruningByAgeStopsAtTheFirstYoungEntryAndKeepsTheNewest() throws {
        let database = try ShopDatabase(path: ":memory:")
        let now = Date(timeIntervalSince1970: 2_000_000_000)
        let old = now.addingTimeInterval(-2 * ChangeLog.retention)
        try database.writer.write { db in
            let first = try ChangeLog.lastSeq(db)
            for _ in 0..<3 { try ChangeLog.append(db, .cart, at: old) }
            let young = try ChangeLog.append(db, .cart, at: now)
            let oldAfterYoung = try ChangeLog.append(db, .cart, at: old)
            let newest = try ChangeLog.append(db, .cart, at: old)
            try ChangeLog.prune(db, lastSeq: newest, now: StoredDate.milliseconds(now))
            // The entries before `first` (the migrations' `reset`, dated now) are young.
            #expect(try ChangeLog.entries(db, after: first, limit: 100).map(\.seq) == [young, oldAfterYoung, newest])
            #expect(try ChangeLog.lastSeq(db) == newest)

            try ChangeLog.prune(db, lastSeq: newest, now: StoredDate.milliseconds(now.addingTimeInterval(2 * ChangeLog.retention)))
            #expect(try ChangeLog.entries(db, after: 0, limit: 100).map(\.seq) == [newest])
            #expect(try ChangeLog.append(db, .cart, at: now) == newest + 1)

            for _ in 0..<ChangeLog.maximumEntries + 5 { try ChangeLog.append(db, .cart, at: now) }
            let last = try ChangeLog.lastSeq(db)
            try ChangeLog.prune(db, lastSeq: last, now: StoredDate.milliseconds(now))
            #expect(try ChangeLog.firstSeq(db) == last - ChangeLog.maximumEntries + 1)

            // Whatever deletes it, the newest entry stays: the database refuses.
            #expect(throws: DatabaseError.self) { try db.execute(sql: "DELETE FROM change_log") }
            #expect(try ChangeLog.lastSeq(db) == last)
            try db.execute(sql: "DELETE FROM change_log WHERE seq < ?", arguments: [last])
            #expect(try ChangeLog.entries(db, after: 0, limit: 10).map(\.seq) == [last])
        }
    }

    /// `v14-lean-writes` drops the log's and the cart lines' `AUTOINCREMENT`: the log numbers on from the
    /// counter even when pruning had emptied it, and every line keeps its number (its place in its cart).
    @Test func theLeanWritesMigrationNumbersOnFromTheCounterAndKeepsLineOrder() async throws {
        let queue = try DatabaseQueue(configuration: ShopDatabase.configuration)
        try ShopSchema.migrator.migrate(queue, upTo: "v13-search-walk-starts")
        try await queue.write { db in
            for _ in 0..<5 { try db.execute(sql: "INSERT INTO change_log (at, kind, subject) VALUES (0, 'cart', '')") }
            try db.execute(sql: "DELETE FROM change_log")  // as the old prune could, after a quiet day
            for (owner, product) in [("g:a", "p-0003"), ("g:b", "p-0001"), ("g:a", "p-0002")] {
                try db.execute(sql: "INSERT INTO cart_line (owner, productId, quantity) VALUES (?, ?, 1)", arguments: [owner, product])
            }
        }
        let counter = try await queue.read { try Int64.fetchOne($0, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'change_log'") }
        try ShopSchema.migrator.migrate(queue)
        try await queue.write { db in
            #expect(try ChangeLog.entries(db, after: 0, limit: 10).map(\.kind) == [.reset])
            #expect(try ChangeLog.lastSeq(db) == counter.map { $0 + 1 })
            #expect(try ChangeLog.append(db, .cart, at: Date()) == counter.map { $0 + 2 })
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_sequence WHERE name IN ('change_log', 'cart_line')") == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE name = 'change_log_by_time'") == 0)
            // Neither table takes a number from the counter (an append would write its page), and the lines keep
            // their index by product (a product's deletion and changes find its carts by it).
            #expect(try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM sqlite_master WHERE name IN ('change_log', 'cart_line') AND sql LIKE '%AUTOINCREMENT%'
                """) == 0)
            #expect(try String.fetchOne(db, sql: "SELECT tbl_name FROM sqlite_master WHERE name = 'cart_line_by_product'") == "cart_line")
            #expect(try StoredRows.pricedCart(db, of: .guest("a")).lines.map(\.productId) == ["p-0003", "p-0002"])
            // The newest line deleted, its number is taken again, by a line newer than every other.
            try db.execute(sql: "DELETE FROM cart_line WHERE owner = 'g:a' AND productId = 'p-0002'")
            try db.execute(sql: "INSERT INTO cart_line (owner, productId, quantity) VALUES ('g:a', 'p-0004', 1)")
            try db.execute(sql: "INSERT INTO cart_line (owner, productId, quantity) VALUES ('g:a', 'p-0002', 1)")
            #expect(try StoredRows.pricedCart(db, of: .guest("a")).lines.map(\.productId) == ["p-0003", "p-0004", "p-0002"])
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

    /// A replay is answered as a success after what it stored is shown: when another server stored it, its record
    /// is handed over only once this server has published it (its poll may not have read it yet).
    @Test func aRecordOfAnotherServersChangeIsHandedOverOnceTheChangeIsPublishedHere() async throws {
        let folder = try TemporaryFolder()
        let writer = ShopServices.testing(try ShopDatabase(path: folder.databasePath))
        let events = ShopEvents()
        let reader = ShopServices.testing(try ShopDatabase(path: folder.databasePath), events: events)  // no poll
        let recorder = EventRecorder(events)
        let key = IdempotencyKey(key: "k-1", fingerprint: "cart/add p-0006 x2")
        let cart = try await IdempotencyKey.$current.withValue(key) { try await writer.cart.add(productId: "p-0006", quantity: 2, for: .testShopper) }
        try await writer.favorites.setFavorite(productId: "p-0002", isFavorite: true, for: .testShopper)  // after it
        #expect(recorder.events.isEmpty)

        #expect(try await reader.idempotency.record(of: "k-1")?.fingerprint == key.fingerprint)
        // Published up to the log's head as the record was read: the keyed change, and what came after it.
        #expect(recorder.events == [
            .cartChanged(cart, shopper: .testShopper), .favoriteChanged(productId: "p-0002", isFavorite: true, shopper: .testShopper),
        ])
        #expect(try await reader.idempotency.record(of: "none") == nil)
        #expect(recorder.events.count == 2)
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
