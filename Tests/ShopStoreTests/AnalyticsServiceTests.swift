import Foundation
import GRDB
import Shop
import TestWaits
import Testing
@testable import ShopStore

/// The live analytics recorder: batches written off the caller's path, trending over the last day,
/// pruning, a full buffer and a failing store.
@Suite struct AnalyticsServiceTests {
    let database: ShopDatabase
    let now = MovableNow()

    init() throws {
        database = try ShopDatabase(path: ":memory:")
    }

    func service(capacity: Int = LiveAnalyticsService.defaultCapacity) -> LiveAnalyticsService {
        LiveAnalyticsService(database: database, capacity: capacity, now: { [now] in now.now })
    }

    func event(_ kind: AnalyticsEvent.Kind, _ productId: String?, hoursAgo: Double = 1, shopper: Shopper = .testShopper) -> AnalyticsEvent {
        AnalyticsEvent(kind: kind, productId: productId, quantity: nil, shopper: shopper, at: now.now.addingTimeInterval(-hoursAgo * 3_600))
    }

    func storedCount() async throws -> Int {
        try await database.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM analytics_event") ?? 0 }
    }

    func product(_ id: String) async throws -> Product {
        try await database.writer.read { try #require(try StoredRows.product($0, id: id)) }
    }

    @Test func aFlushStoresEveryRecordedEventWithItsColumns() async throws {
        let analytics = service()
        analytics.record(AnalyticsEvent(kind: .addedToCart, productId: "p-0001", quantity: 2, shopper: .guest("g1"), at: now.now))
        analytics.record(AnalyticsEvent(kind: .checkout, shopper: .testShopper, at: now.now))
        await analytics.flush()

        let rows = try await database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT at, kind, productId, quantity, owner FROM analytics_event ORDER BY seq")
                .map { row in Array(row.databaseValues) }
        }
        let at = StoredDate.milliseconds(now.now).databaseValue
        #expect(rows == [
            [at, "addedToCart".databaseValue, "p-0001".databaseValue, 2.databaseValue, "g:g1".databaseValue],
            [at, "checkout".databaseValue, .null, .null, "a:1".databaseValue],
        ])
        #expect(analytics.counters == .init(recorded: 2, dropped: 0, stored: 2, failed: 0))
    }

    @Test func trendingRanksViewsPlusThreeTimesCartAddsThenByName() async throws {
        let analytics = service()
        // p-0003: 4 views (score 4); p-0001: 1 view, 1 add (4); p-0002: 2 adds (6); p-0004: only other kinds.
        for _ in 0..<4 { analytics.record(event(.productViewed, "p-0003")) }
        analytics.record(event(.productViewed, "p-0001"))
        analytics.record(event(.addedToCart, "p-0001"))
        analytics.record(event(.addedToCart, "p-0002"))
        analytics.record(event(.addedToCart, "p-0002", shopper: .guest("other")))
        analytics.record(event(.favoriteAdded, "p-0004"))
        analytics.record(event(.quantityChanged, "p-0004"))
        analytics.record(event(.checkout, nil))

        let trending = try await analytics.trending(since: now.now.addingTimeInterval(-86_400), limit: 5)

        let (p1, p2, p3) = try await (product("p-0001"), product("p-0002"), product("p-0003"))
        let tied = [TrendingProduct(product: p1, views: 1, cartAdds: 1), TrendingProduct(product: p3, views: 4, cartAdds: 0)]
            .sorted { ($0.product.name.lowercased(), $0.product.id) < ($1.product.name.lowercased(), $1.product.id) }
        #expect(trending == [TrendingProduct(product: p2, views: 0, cartAdds: 2)] + tied)
    }

    @Test func trendingCountsOnlyThePeriodAndTheLimit() async throws {
        let analytics = service()
        analytics.record(event(.productViewed, "p-0001", hoursAgo: 25))
        analytics.record(event(.productViewed, "p-0001", hoursAgo: 25))
        analytics.record(event(.productViewed, "p-0002", hoursAgo: 23))
        for number in 3...9 { analytics.record(event(.productViewed, String(format: "p-%04d", number))) }

        let trending = try await analytics.trending(since: now.now.addingTimeInterval(-86_400), limit: 5)

        #expect(trending.count == 5)
        #expect(!trending.contains { $0.product.id == "p-0001" })
        #expect(trending.allSatisfy { $0.views == 1 && $0.cartAdds == 0 })
    }

    @Test func aDeletedProductNoLongerTrends() async throws {
        let services = ShopServices.testing(database)
        services.analytics.record(event(.productViewed, "p-0001"))
        services.analytics.record(event(.productViewed, "p-0002"))
        try await services.catalog.delete(ids: ["p-0001"])

        let trending = try await services.analytics.trending(since: now.now.addingTimeInterval(-86_400), limit: 5)

        #expect(trending.map(\.product.id) == ["p-0002"])
    }

    @Test func eventsOlderThanTheRetentionArePrunedByTheWriter() async throws {
        let analytics = service()
        analytics.record(event(.productViewed, "p-0001", hoursAgo: 24 * 8))
        analytics.record(event(.productViewed, "p-0001", hoursAgo: 24 * 6))
        await analytics.flush()
        #expect(try await storedCount() == 1)  // the first batch prunes, after its inserts

        // Within the hour the writer does not prune again; after it, it does.
        analytics.record(event(.productViewed, "p-0001", hoursAgo: 24 * 9))
        await analytics.flush()
        #expect(try await storedCount() == 2)
        now.advance(by: LiveAnalyticsService.pruneInterval)
        analytics.record(event(.productViewed, "p-0001"))
        await analytics.flush()
        #expect(try await storedCount() == 2)
    }

    @Test func aFullBufferDropsAndCountsWhileAWriteIsSlow() async throws {
        let analytics = service(capacity: 3)
        // Hold the writer: a write transaction of our own keeps the writer's from starting.
        let entered = Latch(), release = Latch()
        let holder = Task.detached { [database] in
            try await database.writer.write { _ in
                entered.open()
                release.waitBlocking()
            }
        }
        entered.waitBlocking()
        analytics.record(event(.productViewed, "p-0001"))  // the writer takes it, then waits on the holder
        await settle { analytics.pendingCount == 0 }
        for _ in 0..<5 { analytics.record(event(.productViewed, "p-0002")) }

        #expect(analytics.counters == .init(recorded: 4, dropped: 2, stored: 0, failed: 0))
        release.open()
        try await holder.value
        await analytics.flush()
        #expect(analytics.counters == .init(recorded: 4, dropped: 2, stored: 4, failed: 0))
        #expect(try await storedCount() == 4)
    }

    @Test func aFailingStoreCountsAndRecordingGoesOn() async throws {
        let analytics = service()
        try await database.writer.write { try $0.execute(sql: "DROP TABLE analytics_event") }

        analytics.record(event(.productViewed, "p-0001"))
        analytics.record(event(.addedToCart, "p-0001"))
        await analytics.flush()
        #expect(analytics.counters == .init(recorded: 2, dropped: 0, stored: 0, failed: 2))

        try await database.writer.write { try AnalyticsSchema.migrate($0) }
        analytics.record(event(.productViewed, "p-0001"))
        await analytics.flush()
        #expect(analytics.counters == .init(recorded: 3, dropped: 0, stored: 1, failed: 2))
    }

    @Test func faultsFailTrendingButNeverRecording() async throws {
        let services = ShopServices.live(
            database: database, faults: try FaultPlan(parsing: "analytics:failure-rate=1"), now: { [now] in now.now })
        services.analytics.record(event(.productViewed, "p-0001"))
        await #expect(throws: ShopError.serviceUnavailable("analytics")) {
            try await services.analytics.trending(since: now.now.addingTimeInterval(-86_400), limit: 5)
        }
        await services.analytics.flush()
        #expect(try await storedCount() == 1)
    }
}

/// A one-shot latch for threads outside Swift concurrency (a GRDB write closure).
final class Latch: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    func waitBlocking() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }
}

/// The batch window: events gather until the window ends on the clock, a flush comes, or the buffer is
/// half full.
@Suite struct AnalyticsBatchWindowTests {
    let database: ShopDatabase
    let clock = ManualClock()

    init() throws {
        database = try ShopDatabase(path: ":memory:")
    }

    func event(_ productId: String) -> AnalyticsEvent {
        AnalyticsEvent(kind: .productViewed, productId: productId, shopper: .testShopper, at: fixedNow)
    }

    @Test func eventsGatherUntilTheWindowEndsThenGoInOneTransaction() async throws {
        let analytics = LiveAnalyticsService(database: database, clock: clock, batchWindow: .seconds(1))
        analytics.record(event("p-0001"))
        await settle { clock.sleepers == 1 }
        analytics.record(event("p-0002"))
        analytics.record(event("p-0003"))
        #expect(analytics.counters.stored == 0)

        clock.wake()
        await settle { analytics.counters.stored == 3 }
        #expect(analytics.pendingCount == 0)
    }

    @Test func aFlushEndsTheWindowAtOnce() async throws {
        let analytics = LiveAnalyticsService(database: database, clock: clock, batchWindow: .seconds(1))
        analytics.record(event("p-0001"))
        await settle { clock.sleepers == 1 }
        await analytics.flush()
        #expect(analytics.counters.stored == 1)
        clock.wake()  // the old window's timer ends nothing now
        analytics.record(event("p-0002"))
        await settle { clock.sleepers == 1 }
        #expect(analytics.counters.stored == 1)
        await analytics.flush()
        #expect(analytics.counters.stored == 2)
    }

    @Test func aHalfFullBufferEndsTheWindowRatherThanDrop() async throws {
        let analytics = LiveAnalyticsService(database: database, capacity: 4, clock: clock, batchWindow: .seconds(1))
        analytics.record(event("p-0001"))
        await settle { clock.sleepers == 1 }
        analytics.record(event("p-0002"))  // 2 of 4: the window ends
        await settle { analytics.counters.stored == 2 }
        #expect(analytics.counters.dropped == 0)
    }
}

/// A clock whose sleepers wait until the test wakes them; it counts them.
final class ManualClock: Clock, @unchecked Sendable {
    private let lock = NSLock()
    private var waiting: [CheckedContinuation<Void, Never>] = []

    var now: ContinuousClock.Instant { ContinuousClock.now }
    var minimumResolution: Duration { .zero }

    /// Sleepers waiting now.
    var sleepers: Int { lock.withLock { waiting.count } }

    func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        await withCheckedContinuation { continuation in lock.withLock { waiting.append(continuation) } }
    }

    /// Ends every sleep under way.
    func wake() {
        let woken = lock.withLock {
            defer { waiting = [] }
            return waiting
        }
        for sleeper in woken { sleeper.resume() }
    }
}
