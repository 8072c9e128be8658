import Foundation
import GRDB
import Shop
import Testing
@testable import ShopStore

/// Stored notifications: what produces them (in the writing transaction), the coalescing rule, the bound,
/// reading and marking read.
@Suite @MainActor struct InboxTests {
    let database: ShopDatabase
    let now = MovableNow()
    let services: ShopServices

    init() throws {
        database = try ShopDatabase(path: ":memory:")
        services = ShopServices.testing(database, now: now)
    }

    func register(_ email: String, notifications: Bool = true) async throws -> Shopper {
        let session = try await services.accounts.register(email: email, password: "secret123")
        if !notifications {
            _ = try await services.accounts.updateProfile(accountId: session.account.id, ProfileUpdate(
                name: session.account.name, email: session.account.email, bio: "", notificationsEnabled: false))
        }
        return session.account.shopper
    }

    func product(_ id: String) async throws -> Product {
        try await database.writer.read { db in try StoredRows.product(db, id: id)! }
    }

    /// Runs the product producer as the market's update transaction does.
    func change(_ old: Product, _ update: (inout Product) -> Void) async throws -> InboxRows.Entries {
        var new = old
        update(&new)
        let changed = new
        return try await database.writer.write { db in
            try InboxRows.productChanged(db, from: old, to: changed, at: fixedNow)
        }
    }

    @Test func aCheckoutNotifiesTheAccountInTheSameTransactionAndPublishesInLogOrder() async throws {
        let ann = try await register("ann@example.com")
        _ = try await services.cart.add(productId: "p-0001", quantity: 2, for: ann)
        let recorder = EventRecorder(services.events)
        let order = try await services.orders.placeOrder(expectedRevision: nil, for: ann)

        let page = try await services.notifications.inbox(of: ann, before: nil, limit: 20)
        #expect(page.unreadCount == 1)
        #expect(!page.hasMore)
        let notification = try #require(page.items.first)
        #expect(notification.kind == .orderPlaced)
        #expect(notification.orderId == order.id)
        #expect(notification.productId == nil)
        #expect(notification.title == "Order placed")
        #expect(notification.body == "Order \(order.id): 2 items, total \(order.total).")
        #expect(!notification.isRead)
        let kinds = recorder.events.map { event -> String in
            switch event {
            case .cartChanged: "cart"
            case .orderPlaced: "order"
            case .notificationArrived(let arrived, nil, 1, ann) where arrived == notification: "notification"
            default: "other: \(event)"
            }
        }
        #expect(kinds == ["cart", "order", "notification"])
        let logged = try await database.writer.read { db in try String.fetchAll(db, sql: "SELECT kind FROM change_log ORDER BY seq") }
        #expect(logged.suffix(3) == ["cart", "order", "notification"])
    }

    @Test func accountsWithNotificationsOffAndGuestsGetNone() async throws {
        let ann = try await register("ann@example.com", notifications: false)
        _ = try await services.cart.add(productId: "p-0001", quantity: 1, for: ann)
        _ = try await services.orders.placeOrder(expectedRevision: nil, for: ann)
        #expect(try await services.notifications.inbox(of: ann, before: nil, limit: 20) == InboxPage(items: [], unreadCount: 0, hasMore: false))

        let guest = Shopper.guest("g1")
        _ = try await services.cart.add(productId: "p-0001", quantity: 1, for: guest)
        // A guest cannot check out at all (the store refuses it), so no order notifies a guest.
        let refusal = await #expect(throws: ShopError.self) { try await services.orders.placeOrder(expectedRevision: nil, for: guest) }
        #expect(refusal?.reason == "signInRequired")
        let count = try await database.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notification") }
        #expect(count == 0)
        await #expect(throws: ShopError.signInRequired("see your notifications")) {
            try await services.notifications.inbox(of: guest, before: nil, limit: 20)
        }
        await #expect(throws: ShopError.signInRequired("see your notifications")) { try await services.notifications.markAllRead(of: guest) }
    }

    @Test func favouritersAreToldOfRestocksAndPriceDropsAndAnUnreadOneIsUpdatedNotDuplicated() async throws {
        let ann = try await register("ann@example.com")
        let bob = try await register("bob@example.com", notifications: false)
        let cy = try await register("cy@example.com")
        for shopper in [ann, bob] { try await services.favorites.setFavorite(productId: "p-0002", isFavorite: true, for: shopper) }
        var sold = try await product("p-0002")
        sold.stock = 0

        let first = try await change(sold) { $0.stock = 5; $0.price = Money(minorUnits: $0.price.minorUnits - 100) }
        #expect(first.count == 2)  // Ann's two; Bob turned them off, Cy did not favourite it
        var page = try await services.notifications.inbox(of: ann, before: nil, limit: 20)
        #expect(page.items.map(\.kind) == [.priceDropped, .backInStock])
        #expect(page.unreadCount == 2)
        #expect(try await services.notifications.inbox(of: cy, before: nil, limit: 20).items.isEmpty)
        #expect(try await services.notifications.inbox(of: bob, before: nil, limit: 20).items.isEmpty)

        // A further drop while the first is unread replaces it: new id, at the top, the count unchanged.
        let dropped = try await product("p-0002")
        let cheaper = Money(minorUnits: dropped.price.minorUnits - 200)
        let second = try await change(dropped) { $0.price = cheaper }
        let replacedId = page.items[0].id
        page = try await services.notifications.inbox(of: ann, before: nil, limit: 20)
        #expect(page.items.map(\.kind) == [.priceDropped, .backInStock])
        #expect(page.items[0].id != replacedId)
        #expect(page.items[0].body == "\(dropped.name) now costs \(cheaper) (was \(dropped.price)).")
        #expect(page.unreadCount == 2)
        guard case .notificationArrived(let arrived, let replacing, 2, ann) = second.first?.events.first else {
            Issue.record("Expected an arrival, got \(second)")
            return
        }
        #expect(arrived == page.items[0])
        #expect(replacing == replacedId)

        // Once read, the next drop is a new notification.
        try await services.notifications.markRead(ids: [page.items[0].id], of: ann)
        _ = try await change(try await product("p-0002")) { $0.price = Money(minorUnits: $0.price.minorUnits - 1) }
        page = try await services.notifications.inbox(of: ann, before: nil, limit: 20)
        #expect(page.items.map(\.kind) == [.priceDropped, .priceDropped, .backInStock])
        #expect(page.items.map(\.isRead) == [false, true, false])
        #expect(page.unreadCount == 2)

        // A price rise, or stock that was not 0, notifies nobody.
        #expect(try await change(try await product("p-0002")) { $0.price = Money(minorUnits: $0.price.minorUnits + 500); $0.stock += 3 }.isEmpty)
    }

    @Test func anInboxKeepsItsNewest500AndPagesNewestFirst() async throws {
        let ann = try await register("ann@example.com")
        let order = Order(id: "o-000001", createdAt: fixedNow, lines: [], subtotal: .zero, tax: .zero, total: .zero)
        try await database.writer.write { db in
            for _ in 0..<505 { _ = try InboxRows.orderPlaced(db, order: order, owner: ann, at: fixedNow) }
        }
        var seen: [String] = []
        var before: String?
        var pages = 0
        repeat {
            let page = try await services.notifications.inbox(of: ann, before: before, limit: 20)
            #expect(page.unreadCount == 500)
            seen += page.items.map(\.id)
            before = page.items.last?.id
            pages += 1
            if !page.hasMore { break }
        } while pages < 100
        #expect(seen.count == 500)
        #expect(pages == 25)
        let numbers = seen.compactMap(InboxNotification.seq(of:))
        #expect(numbers == numbers.sorted(by: >))
        #expect(numbers.first == 505 && numbers.last == 6)
    }

    @Test func markingReadNamesWhatChangedAndCountsWhatIsLeft() async throws {
        let ann = try await register("ann@example.com")
        let bob = try await register("bob@example.com")
        let order = Order(id: "o-000001", createdAt: fixedNow, lines: [], subtotal: .zero, tax: .zero, total: .zero)
        try await database.writer.write { db in
            for _ in 0..<3 { _ = try InboxRows.orderPlaced(db, order: order, owner: ann, at: fixedNow) }
            _ = try InboxRows.orderPlaced(db, order: order, owner: bob, at: fixedNow)
        }
        let recorder = EventRecorder(services.events)
        // n-4 is Bob's, n-9 does not exist: neither changes; n-1 is read twice but counted once.
        #expect(try await services.notifications.markRead(ids: ["n-1", "n-4", "n-9", "n-1", "junk"], of: ann) == 2)
        #expect(try await services.notifications.markRead(ids: ["n-1"], of: ann) == 2)  // nothing changed, nothing published
        try await services.notifications.markAllRead(of: ann)
        try await services.notifications.markAllRead(of: ann)
        // (The producer's entries, written here outside a service, are read back from the log first.)
        #expect(recorder.events.filter { if case .notificationsRead = $0 { true } else { false } } == [
            .notificationsRead(ids: ["n-1"], unreadCount: 2, shopper: ann),
            .notificationsRead(ids: ["n-2", "n-3"], unreadCount: 0, shopper: ann),
        ])
        #expect(try await services.notifications.inbox(of: bob, before: nil, limit: 20).unreadCount == 1)
        let subjects = try await database.writer.read { db in
            try String.fetchAll(db, sql: "SELECT subject FROM change_log WHERE kind = 'notificationsRead' ORDER BY seq")
        }
        #expect(subjects == ["\(ann.storageKey) n-1", "\(ann.storageKey) n-2,n-3"])
    }

    @Test func theChangesOfOneInboxEndWhenTheIterationDoes() async throws {
        let ann = try await register("ann@example.com")
        let before = services.events.subscriberCount
        var changes: AsyncStream<InboxChange>? = services.notifications.changes(of: ann)
        #expect(services.events.subscriberCount == before + 1)
        let task = Task { @MainActor [changes] in
            var received: [InboxChange] = []
            for await change in changes! {
                received.append(change)
                if received.count == 1 { break }
            }
            return received
        }
        changes = nil
        _ = try await services.cart.add(productId: "p-0001", quantity: 1, for: ann)
        let order = try await services.orders.placeOrder(expectedRevision: nil, for: ann)
        let received = await task.value
        guard case .arrived(let notification, nil, 1) = received.first else {
            Issue.record("Expected an arrival, got \(received)")
            return
        }
        #expect(notification.orderId == order.id)
        #expect(services.events.subscriberCount == before)
    }

    /// The inbox's kept counts, and the same counted from its rows.
    func counts(_ owner: Shopper) async throws -> (kept: InboxRows.Counts, counted: InboxRows.Counts) {
        try await database.writer.read { db in
            let counted = try Row.fetchOne(db, sql: "SELECT COUNT(*), COUNT(*) FILTER (WHERE readAt IS NULL) FROM notification WHERE owner = ?",
                                           arguments: [owner.storageKey])!
            return (try InboxRows.counts(db, owner: owner.storageKey), InboxRows.Counts(stored: counted[0], unread: counted[1]))
        }
    }

    @Test func theCountsFollowArrivalsReplacementsTheBoundAndReading() async throws {
        let ann = try await register("ann@example.com")
        let bob = try await register("bob@example.com")
        #expect(try await counts(ann).kept == InboxRows.Counts(stored: 0, unread: 0))
        try await services.favorites.setFavorite(productId: "p-0002", isFavorite: true, for: ann)
        let order = Order(id: "o-000001", createdAt: fixedNow, lines: [], subtotal: .zero, tax: .zero, total: .zero)
        try await database.writer.write { db in
            for _ in 0..<498 { _ = try InboxRows.orderPlaced(db, order: order, owner: ann, at: fixedNow) }
            _ = try InboxRows.orderPlaced(db, order: order, owner: bob, at: fixedNow)
        }
        // The oldest two read (n-1, n-2), so that the bound deletes read ones first, then unread ones.
        #expect(try await services.notifications.markRead(ids: ["n-1", "n-2", "n-499"], of: ann) == 496)
        var tally = try await counts(ann)
        #expect(tally.kept == InboxRows.Counts(stored: 498, unread: 496) && tally.kept == tally.counted)

        // Restocked and cheaper: two more (500), then a further drop replaces its unread one (still 500).
        var sold = try await product("p-0002")
        sold.stock = 0
        let arrivals = try await change(sold) { $0.stock = 5; $0.price = Money(minorUnits: $0.price.minorUnits - 100) }
        #expect(arrivals.flatMap(\.events).map { if case .notificationArrived(_, _, let unread, _) = $0 { unread } else { -1 } } == [497, 498])
        _ = try await change(try await product("p-0002")) { $0.price = Money(minorUnits: $0.price.minorUnits - 100) }
        tally = try await counts(ann)
        #expect(tally.kept == InboxRows.Counts(stored: 500, unread: 498) && tally.kept == tally.counted)

        // Past the bound: each arrival deletes the oldest, read (n-1, n-2) and then unread (n-3, ...).
        let beyond = try await database.writer.write { db in
            try (0..<4).flatMap { _ in try InboxRows.orderPlaced(db, order: order, owner: ann, at: fixedNow) }
        }
        #expect(beyond.flatMap(\.events).map { if case .notificationArrived(_, _, let unread, _) = $0 { unread } else { -1 } } == [499, 500, 500, 500])
        tally = try await counts(ann)
        #expect(tally.kept == InboxRows.Counts(stored: 500, unread: 500) && tally.kept == tally.counted)
        let oldest = try await database.writer.read { db in try Int64.fetchOne(db, sql: "SELECT MIN(seq) FROM notification WHERE owner = ?", arguments: [ann.storageKey]) }
        #expect(oldest == 5)

        try await services.notifications.markAllRead(of: ann)
        tally = try await counts(ann)
        #expect(tally.kept == InboxRows.Counts(stored: 500, unread: 0) && tally.kept == tally.counted)
        #expect(try await services.notifications.inbox(of: ann, before: nil, limit: 1).unreadCount == 0)
        tally = try await counts(bob)
        #expect(tally.kept == InboxRows.Counts(stored: 1, unread: 1) && tally.kept == tally.counted)
    }

    @Test func aDatabaseFromBeforeTheCountsHasItsInboxesCounted() async throws {
        let queue = try DatabaseQueue(configuration: ShopDatabase.configuration)
        try ShopSchema.migrator.migrate(queue, upTo: "v7-search-counts")
        try await queue.write { db in
            for (owner, readAt) in [("a:1", nil), ("a:1", 5), ("a:1", nil), ("a:2", 7)] as [(String, Int64?)] {
                try db.execute(sql: """
                    INSERT INTO notification (owner, kind, title, body, createdAt, readAt) VALUES (?, 'orderPlaced', 'Order placed', '', 0, ?)
                    """, arguments: [owner, readAt])
            }
        }
        try ShopSchema.migrator.migrate(queue)
        let counts = try await queue.read { db in
            try Row.fetchAll(db, sql: "SELECT owner || ' ' || stored || ' ' || unread FROM inbox ORDER BY owner").map { $0[0] as String }
        }
        #expect(counts == ["a:1 3 2", "a:2 1 0"])
    }
}
