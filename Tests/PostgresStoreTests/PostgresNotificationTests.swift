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

    /// Stores `count` order notifications for `owner`, as checkouts do; returns their ids, oldest first.
    @discardableResult
    func notify(_ owner: Shopper, count: Int, on server: PostgresTestServer) async throws -> [String] {
        let order = Order(id: "o-000001", createdAt: now.now, lines: [], subtotal: .zero, tax: .zero, total: .zero)
        let entries = try await server.database.write { [now] session in
            var entries: PostgresInboxRows.Entries = []
            for _ in 0..<count { entries += try await PostgresInboxRows.orderPlaced(session, order: order, owner: owner, at: now.now) }
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
}
