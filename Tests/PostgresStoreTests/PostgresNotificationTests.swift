import Foundation
@testable import PostgresStore
import Shop
@testable import ShopStore
import Testing

/// The inbox over PostgreSQL: pages, marking read (what is logged and published, on one server and with
/// two at once), and the changes of one inbox as a stream.
@Suite(.enabled(if: TestPostgres.isAvailable, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster to test against (scripts/test.sh starts one)")) @MainActor
struct PostgresNotificationTests {
    let now = PostgresTestNow()

    /// Registers an account (notifications on).
    func register(_ email: String, on server: PostgresTestServer) async throws -> Shopper {
        try await server.accounts.register(email: email, password: "secret123").account.shopper
    }

    /// Stores `count` order notifications for `owner`, as checkouts do (each with its entry and counts in one
    /// statement, its number taken before); returns their ids, oldest first.
    @discardableResult
    func notify(_ owner: Shopper, count: Int, on server: PostgresTestServer) async throws -> [String] {
        let order = Order(id: "o-000001", createdAt: now.now, lines: [], subtotal: .zero, tax: .zero, total: .zero)
        let entries = try await server.database.write { [now] session in
            var entries: PostgresInboxRows.Entries = []
            for _ in 0..<count {
                let seq = try #require(try await session.value("SELECT nextval(pg_get_serial_sequence('notification', 'seq'))", as: Int64.self))
                var statement = PostgresStatement()
                let notice = try PostgresInboxRows.orderPlaced(order: order, owner: owner, seq: seq, at: now.now, in: &statement)
                let (seqs, unread) = try await PostgresChangeLog.append(
                    session, [(.notification, notice.id)], at: now.now, after: statement, returning: PostgresInboxRows.unreadAfter, as: Int.self)
                entries.append((seqs[0], [.notificationArrived(notice, replacing: nil, unreadCount: unread, shopper: owner)]))
            }
            return entries
        }
        await server.feed.committed(entries)
        return entries.flatMap(\.events).compactMap { event in
            if case .notificationArrived(let notification, _, _, _) = event { notification.id } else { nil }
        }
    }

    @Test func anInboxPagesNewestFirstWithItsUnreadCount() async throws {
        let server = try await PostgresTestServer(now: now)
        let ann = try await register("ann@example.com", on: server)
        let bob = try await register("bob@example.com", on: server)
        let ids = try await notify(ann, count: 45, on: server)
        try await notify(bob, count: 1, on: server)

        var pages: [InboxPage] = []
        var before: String?
        repeat {
            let page = try await server.notifications.inbox(of: ann, before: before, limit: 20)
            pages.append(page)
            before = page.items.last?.id
        } while pages.last?.hasMore == true && pages.count < 10

        #expect(pages.map(\.items.count) == [20, 20, 5])
        #expect(pages.map(\.hasMore) == [true, true, false])
        #expect(pages.allSatisfy { $0.unreadCount == 45 })
        #expect(pages.flatMap(\.items).map(\.id) == ids.reversed())
        let newest = try #require(pages.first?.items.first)
        #expect(newest == InboxNotification(
            id: ids.last!, kind: .orderPlaced, title: "Order placed", body: "Order o-000001: 0 items, total \(Money.zero).",
            productId: nil, orderId: "o-000001", createdAt: now.now, isRead: false))
        #expect(try await server.notifications.inbox(of: ann, before: nil, limit: 0) == InboxPage(items: [], unreadCount: 45, hasMore: true))
        await #expect(throws: ShopError.notificationNotFound("junk")) { try await server.notifications.inbox(of: ann, before: "junk", limit: 20) }
    }

    @Test func guestsHaveNoInbox() async throws {
        let server = try await PostgresTestServer(now: now)
        let guest = Shopper.guest("g1")
        await #expect(throws: ShopError.signInRequired("see your notifications")) {
            try await server.notifications.inbox(of: guest, before: nil, limit: 20)
        }
        await #expect(throws: ShopError.signInRequired("see your notifications")) { try await server.notifications.markRead(ids: ["n-1"], of: guest) }
        await #expect(throws: ShopError.signInRequired("see your notifications")) { try await server.notifications.markAllRead(of: guest) }
    }

    @Test func markingReadNamesWhatChangedLogsItAndCountsWhatIsLeft() async throws {
        let server = try await PostgresTestServer(now: now)
        let ann = try await register("ann@example.com", on: server)
        let bob = try await register("bob@example.com", on: server)
        try await notify(ann, count: 3, on: server)  // n-1, n-2, n-3
        try await notify(bob, count: 1, on: server)  // n-4
        let logged = try await server.logged().count
        let recorder = PostgresEventRecorder(server.events)

        // n-4 is Bob's, n-9 does not exist: neither changes; n-1 is named twice but changes once.
        #expect(try await server.notifications.markRead(ids: ["n-1", "n-4", "n-9", "n-1", "junk"], of: ann) == 2)
        #expect(try await server.notifications.markRead(ids: ["n-1"], of: ann) == 2)  // nothing changed, nothing published
        try await server.notifications.markAllRead(of: ann)
        try await server.notifications.markAllRead(of: ann)

        #expect(recorder.events == [
            .notificationsRead(ids: ["n-1"], unreadCount: 2, shopper: ann),
            .notificationsRead(ids: ["n-2", "n-3"], unreadCount: 0, shopper: ann),
        ])
        #expect(try await server.logged().dropFirst(logged) == [
            PostgresLogEntry(kind: "notificationsRead", subject: "\(ann.storageKey) n-1"),
            PostgresLogEntry(kind: "notificationsRead", subject: "\(ann.storageKey) n-2,n-3"),
        ])
        let page = try await server.notifications.inbox(of: ann, before: nil, limit: 20)
        #expect(page.unreadCount == 0 && page.items.allSatisfy(\.isRead))
        #expect(try await server.notifications.inbox(of: bob, before: nil, limit: 20).unreadCount == 1)
    }

    @Test func twoServersMarkingTheSameNotificationsReadAtOnceAnnounceEachOnce() async throws {
        let first = try await PostgresTestServer(now: now)
        let second = try await PostgresTestServer(sharing: first.database, now: now)
        let ann = try await register("ann@example.com", on: first)
        let ids = try await notify(ann, count: 6, on: first)
        let logged = try await first.logged().count

        async let byFirst: Void = first.notifications.markAllRead(of: ann)
        async let bySecond = second.notifications.markRead(ids: ids, of: ann)
        _ = try await (byFirst, bySecond)

        let named = try await first.logged().dropFirst(logged).flatMap { entry in
            entry.subject.split(separator: " ")[1].split(separator: ",").map(String.init)
        }
        #expect(named.sorted() == ids.sorted())
        #expect(try await first.notifications.inbox(of: ann, before: nil, limit: 20).unreadCount == 0)
    }

    @Test func theChangesOfAnInboxFollowMarkingReadAndEndWithTheIteration() async throws {
        let server = try await PostgresTestServer(now: now)
        let ann = try await register("ann@example.com", on: server)
        let bob = try await register("bob@example.com", on: server)
        let ids = try await notify(ann, count: 2, on: server)
        let subscribers = server.events.subscriberCount
        var changes: AsyncStream<InboxChange>? = server.notifications.changes(of: ann)
        #expect(server.events.subscriberCount == subscribers + 1)
        let received = Task { @MainActor [changes] in
            var received: [InboxChange] = []
            for await change in changes! {
                received.append(change)
                if received.count == 2 { break }
            }
            return received
        }
        changes = nil  // the task holds the only reference: ending its iteration unsubscribes

        try await notify(bob, count: 1, on: server)  // another inbox's: not in the stream
        try await server.notifications.markRead(ids: [ids[0]], of: ann)
        let arrived = try await notify(ann, count: 1, on: server)

        let changesSeen = await received.value
        #expect(changesSeen.count == 2)
        #expect(changesSeen.first == .read(ids: [ids[0]], unreadCount: 1))
        guard case .arrived(let notification, nil, 2) = changesSeen.last else {
            Issue.record("Expected an arrival, got \(changesSeen)")
            return
        }
        #expect(notification.id == arrived.first)
        await server.events.settled()
        #expect(server.events.subscriberCount == subscribers)
    }

    /// `owner`'s kept inbox counts and the same counted from its rows, as "stored unread".
    func counts(_ owner: Shopper, on server: PostgresTestServer) async throws -> (kept: String, counted: String) {
        try await server.database.read { session in
            let kept = try await session.value(
                "SELECT stored || ' ' || unread FROM inbox WHERE owner = \(owner.storageKey)", as: String.self) ?? "none"
            let counted = try await session.value("""
                SELECT COUNT(*) || ' ' || COUNT(*) FILTER (WHERE readAt IS NULL) FROM notification WHERE owner = \(owner.storageKey)
                """, as: String.self) ?? ""
            return (kept, counted)
        }
    }

    @Test func theCountsFollowArrivalsReplacementsTheBoundAndReading() async throws {
        let server = try await PostgresTestServer(now: now)
        let ann = try await register("ann@example.com", on: server)
        let bob = try await register("bob@example.com", on: server)
        try await server.favorites.setFavorite(productId: "p-0002", isFavorite: true, for: ann)
        try await notify(ann, count: 498, on: server)
        try await notify(bob, count: 1, on: server)
        // The oldest two read, so that the bound deletes read ones first, then unread ones.
        #expect(try await server.notifications.markRead(ids: ["n-1", "n-2", "n-499"], of: ann) == 496)
        #expect(try await counts(ann, on: server) == ("498 496", "498 496"))

        // Restocked and cheaper: two more (500), then a further drop replaces its unread one (still 500).
        let old = try #require(try await server.database.read { try await PostgresRows.product($0, id: "p-0002") })
        var sold = old
        sold.stock = 0
        var restocked = old
        restocked.stock = 5
        restocked.price = Money(minorUnits: old.price.minorUnits - 100)
        var cheaper = restocked
        cheaper.price = Money(minorUnits: restocked.price.minorUnits - 100)
        let arrivals = try await server.database.write { [now, sold, restocked, cheaper] session in
            try await PostgresInboxRows.productChanged(session, from: sold, to: restocked, at: now.now)
                + PostgresInboxRows.productChanged(session, from: restocked, to: cheaper, at: now.now)
        }
        await server.feed.committed(arrivals)
        let unreadCounts = arrivals.flatMap(\.events).map { if case .notificationArrived(_, _, let unread, _) = $0 { unread } else { -1 } }
        #expect(unreadCounts == [497, 498, 498])
        #expect(try await counts(ann, on: server) == ("500 498", "500 498"))

        // Past the bound: each arrival deletes the oldest, read (n-1, n-2) and then unread (n-3, ...).
        try await notify(ann, count: 4, on: server)
        #expect(try await counts(ann, on: server) == ("500 500", "500 500"))
        let oldest = try await server.database.read { try await $0.value("SELECT MIN(seq) FROM notification WHERE owner = \(ann.storageKey)", as: Int64.self) }
        #expect(oldest == 5)

        try await server.notifications.markAllRead(of: ann)
        #expect(try await counts(ann, on: server) == ("500 0", "500 0"))
        #expect(try await server.notifications.inbox(of: ann, before: nil, limit: 1).unreadCount == 0)
        #expect(try await counts(bob, on: server) == ("1 1", "1 1"))
    }

    @Test func aDatabaseFromBeforeTheCountsHasItsInboxesCounted() async throws {
        let server = try await PostgresTestServer(now: now)
        let ann = try await register("ann@example.com", on: server)
        let bob = try await register("bob@example.com", on: server)
        try await notify(ann, count: 3, on: server)
        try await notify(bob, count: 1, on: server)
        try await server.notifications.markRead(ids: ["n-2"], of: ann)
        // Back to the schema before the counts, the notifications kept.
        _ = try await TestPostgres.execute("DROP TABLE inbox", on: server.database.url)
        _ = try await TestPostgres.execute("DELETE FROM storefront_migrations WHERE identifier = 'v8-inbox-counts'", on: server.database.url)

        let reopened = try await PostgresTestServer(sharing: server.database, now: now)
        #expect(try await counts(ann, on: reopened) == ("3 2", "3 2"))
        #expect(try await counts(bob, on: reopened) == ("1 1", "1 1"))
        #expect(try await reopened.notifications.inbox(of: ann, before: nil, limit: 20).unreadCount == 2)
    }
}
