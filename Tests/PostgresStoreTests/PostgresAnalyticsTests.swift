import Clocks
import Foundation
@testable import PostgresStore
import Shop
@testable import ShopStore
import TestWaits
import Testing

/// Analytics over PostgreSQL: batches stored in one statement with their nulls, the batch window on a test
/// clock, trending over the period, pruning, and a failing store.
@Suite(.enabled(if: TestPostgres.isAvailable, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster to test against (scripts/test.sh starts one)"))
struct PostgresAnalyticsTests {
    let now = PostgresTestNow()

    func event(_ kind: AnalyticsEvent.Kind, _ productId: String?, hoursAgo: Double = 1, shopper: Shopper = .account(1)) -> AnalyticsEvent {
        AnalyticsEvent(kind: kind, productId: productId, shopper: shopper, at: now.now.addingTimeInterval(-hoursAgo * 3_600))
    }

    func service(_ database: PostgresShopDatabase, clock: any Clock<Duration> = ImmediateClock<Duration>(), capacity: Int = AnalyticsRecorder.defaultCapacity)
        -> PostgresAnalyticsService {
        PostgresAnalyticsService(database: database, capacity: capacity, clock: clock, now: { [now] in now.now })
    }

    func storedCount(_ database: PostgresShopDatabase) async throws -> Int {
        try await database.read { try await $0.value("SELECT COUNT(*) FROM analytics_event", as: Int.self) ?? 0 }
    }

    /// How many transactions wrote the stored events (their rows' `xmin`).
    func transactions(_ database: PostgresShopDatabase) async throws -> Int {
        try await database.read { try await $0.value("SELECT COUNT(DISTINCT xmin::text) FROM analytics_event", as: Int.self) ?? 0 }
    }

    func product(_ database: PostgresShopDatabase, _ id: String) async throws -> Product {
        try #require(try await database.read { try await PostgresRows.product($0, id: id) })
    }

    @Test func aFlushStoresEveryRecordedEventWithItsColumnsAndNullsInOneTransaction() async throws {
        let database = try await TestPostgres.freshDatabase()
        let analytics = service(database, clock: TestClock<Duration>())
        analytics.record(AnalyticsEvent(kind: .addedToCart, productId: "p-0001", quantity: 2, shopper: .guest("g1"), at: now.now))
        analytics.record(AnalyticsEvent(kind: .checkout, quantity: 0, shopper: .account(1), at: now.now))
        analytics.record(AnalyticsEvent(kind: .productViewed, productId: "", shopper: .account(2), at: now.now.addingTimeInterval(-1)))
        await analytics.flush()

        let rows = try await database.read { session in
            try await session.rows("SELECT at, kind, productId, quantity, owner FROM analytics_event ORDER BY seq").map { row in
                let (at, kind, productId, quantity, owner) = try row.decode((Int64, String, String?, Int64?, String).self)
                return "\(at) \(kind) \(productId ?? "null") \(quantity.map(String.init) ?? "null") \(owner)"
            }
        }
        let at = StoredDate.milliseconds(now.now)
        #expect(rows == [
            "\(at) addedToCart p-0001 2 g:g1",
            "\(at) checkout null 0 a:1",
            "\(at - 1000) productViewed  null a:2",
        ])
        #expect(try await transactions(database) == 1)
        #expect(analytics.counters == AnalyticsCounters(recorded: 3, stored: 3))
    }

    @Test func aLargeBatchIsOneStatement() async throws {
        let database = try await TestPostgres.freshDatabase()
        let analytics = service(database, clock: TestClock<Duration>())
        for number in 0..<5_000 { analytics.record(event(.productViewed, String(format: "p-%04d", number % 240 + 1))) }
        await analytics.flush()
        #expect(try await storedCount(database) == 5_000)
        #expect(try await transactions(database) == 1)
        #expect(analytics.counters == AnalyticsCounters(recorded: 5_000, stored: 5_000))
    }

    @Test func eventsGatherUntilTheWindowEndsOnTheClockThenGoInOneTransaction() async throws {
        let database = try await TestPostgres.freshDatabase()
        let clock = TestClock<Duration>()
        let analytics = service(database, clock: clock)
        analytics.record(event(.productViewed, "p-0001"))
        await settle { await isSleeping(on: clock) }
        analytics.record(event(.productViewed, "p-0002"))
        analytics.record(event(.addedToCart, "p-0003"))
        #expect(analytics.counters.stored == 0)
        #expect(analytics.pendingCount == 3)

        await clock.advance(by: AnalyticsRecorder.batchWindow)
        await settle { analytics.counters.stored == 3 }
        #expect(try await transactions(database) == 1)
        #expect(analytics.pendingCount == 0)
    }

    @Test func aFlushOrAHalfFullBufferEndsTheWindowAtOnce() async throws {
        let database = try await TestPostgres.freshDatabase()
        let clock = TestClock<Duration>()
        let analytics = service(database, clock: clock, capacity: 4)
        analytics.record(event(.productViewed, "p-0001"))
        await settle { await isSleeping(on: clock) }
        await analytics.flush()
        #expect(analytics.counters.stored == 1)

        analytics.record(event(.productViewed, "p-0002"))
        await settle { await isSleeping(on: clock) }
        analytics.record(event(.productViewed, "p-0003"))  // 2 of 4: the window ends
        await settle { analytics.counters.stored == 3 }
        #expect(analytics.counters == AnalyticsCounters(recorded: 3, stored: 3))
    }

    @Test func trendingRanksViewsPlusThreeTimesCartAddsThenByNameWithinThePeriod() async throws {
        let database = try await TestPostgres.freshDatabase()
        let analytics = service(database)
        // p-0003: 4 views (score 4); p-0001: 1 view, 1 add (4); p-0002: 2 adds (6); p-0004: only other kinds;
        // p-0005: viewed before the period.
        for _ in 0..<4 { analytics.record(event(.productViewed, "p-0003")) }
        analytics.record(event(.productViewed, "p-0001"))
        analytics.record(event(.addedToCart, "p-0001"))
        analytics.record(event(.addedToCart, "p-0002"))
        analytics.record(event(.addedToCart, "p-0002", shopper: .guest("other")))
        analytics.record(event(.favoriteAdded, "p-0004"))
        analytics.record(event(.quantityChanged, "p-0004"))
        analytics.record(event(.checkout, nil))
        for _ in 0..<9 { analytics.record(event(.productViewed, "p-0005", hoursAgo: 25)) }

        // Trending flushes first: every event recorded before it counts.
        let trending = try await analytics.trending(since: now.now.addingTimeInterval(-86_400), limit: 5)

        let (p1, p2, p3) = try await (product(database, "p-0001"), product(database, "p-0002"), product(database, "p-0003"))
        let tied = [TrendingProduct(product: p1, views: 1, cartAdds: 1), TrendingProduct(product: p3, views: 4, cartAdds: 0)]
            .sorted { ($0.product.name.lowercased(), $0.product.id) < ($1.product.name.lowercased(), $1.product.id) }
        #expect(trending == [TrendingProduct(product: p2, views: 0, cartAdds: 2)] + tied)
        #expect(try await analytics.trending(since: now.now.addingTimeInterval(-86_400), limit: 1) == [trending[0]])
        #expect(try await analytics.trending(since: now.now.addingTimeInterval(-86_400), limit: -1) == [])
    }

    @Test func aDeletedProductNoLongerTrends() async throws {
        let database = try await TestPostgres.freshDatabase()
        let analytics = service(database)
        analytics.record(event(.productViewed, "p-0001"))
        analytics.record(event(.productViewed, "p-0002"))
        _ = try await TestPostgres.execute("DELETE FROM product WHERE id = 'p-0001'", on: database.url)

        let trending = try await analytics.trending(since: now.now.addingTimeInterval(-86_400), limit: 5)

        #expect(trending.map(\.product.id) == ["p-0002"])
        #expect(try await storedCount(database) == 2)  // its events stay until they age out
    }

    @Test func eventsOlderThanTheRetentionArePrunedByTheWriterAtMostHourly() async throws {
        let database = try await TestPostgres.freshDatabase()
        let analytics = service(database)
        analytics.record(event(.productViewed, "p-0001", hoursAgo: 24 * 8))
        analytics.record(event(.productViewed, "p-0001", hoursAgo: 24 * 6))
        await analytics.flush()
        #expect(try await storedCount(database) == 1)  // the first batch prunes, after its inserts

        analytics.record(event(.productViewed, "p-0001", hoursAgo: 24 * 9))
        await analytics.flush()
        #expect(try await storedCount(database) == 2)  // within the hour: no prune
        now.advance(by: AnalyticsRecorder.pruneInterval)
        analytics.record(event(.productViewed, "p-0001"))
        await analytics.flush()
        #expect(try await storedCount(database) == 2)
    }

    @Test func aFailingStoreCountsAndRecordingGoesOn() async throws {
        let database = try await TestPostgres.freshDatabase()
        let analytics = service(database)
        _ = try await TestPostgres.execute("ALTER TABLE analytics_event RENAME TO analytics_event_away", on: database.url)

        analytics.record(event(.productViewed, "p-0001"))
        analytics.record(event(.addedToCart, "p-0001"))
        await analytics.flush()
        #expect(analytics.counters == AnalyticsCounters(recorded: 2, failed: 2))

        _ = try await TestPostgres.execute("ALTER TABLE analytics_event_away RENAME TO analytics_event", on: database.url)
        analytics.record(event(.productViewed, "p-0001"))
        await analytics.flush()
        #expect(analytics.counters == AnalyticsCounters(recorded: 3, stored: 1, failed: 2))
        #expect(try await storedCount(database) == 1)
    }
}
