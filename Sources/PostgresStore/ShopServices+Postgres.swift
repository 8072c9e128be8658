import Credentials
import Foundation
import Logging
import Shop
import ShopStore

extension ShopServices {
    /// The composition root's factory for PostgreSQL: every service over `database`, publishing on `events`,
    /// with `faults` injected in front of them (none by default), and the change feed woken by `LISTEN`
    /// (see `PostgresChangeListener`) for what other servers store. The listener stops when the database
    /// is released.
    ///
    /// - Parameters:
    ///   - database: The opened database.
    ///   - faults: Latency and failures to inject; `FaultPlan.none` for normal operation.
    ///   - clock: The clock injected latency waits on, the analytics recorder's batch window and the market's.
    ///   - faultSeed: Seeds the choice of failing calls.
    ///   - events: The change feed the services publish to and the ViewModels subscribe to.
    ///   - now: The current date.
    ///   - hasher: How passwords are hashed.
    ///   - market: a market simulation to run on `clock` (nil: none); it stops when the services are released.
    /// - Returns: The services and the feed.
    @MainActor
    public static func postgres(
        database: PostgresShopDatabase,
        faults: FaultPlan = .none,
        clock: any Clock<Duration> = ContinuousClock(),
        faultSeed: UInt64 = 42,
        events: ShopEvents = ShopEvents(),
        now: @escaping @Sendable () -> Date = { Date() },
        hasher: PasswordHasher = PasswordHasher(),
        market: MarketSimulation? = nil
    ) -> ShopServices {
        let feed = ChangeFeed(
            source: PostgresChangeLogSource(database: database), position: database.lastSeqAtOpen, events: events,
            logger: Logger(label: "storefront.feed"))
        database.keep(PostgresChangeListener.start(url: database.url, feed: feed, ownEntries: database.ownEntries, logger: database.logger))
        // A slow poll of the log's head besides: it catches up after a read of the log failed, and it notices
        // what a LISTEN connection that died silently (a NAT's idle timeout) no longer says.
        database.keep(feed.follow(every: PostgresChangeListener.safetyPollInterval, clock: clock))
        if let market {
            // The simulator holds the feed weakly: released services end it.
            Task { @MainActor [weak feed] in
                guard let simulator = feed.map({ PostgresMarketSimulator(database: database, feed: $0, settings: market, now: now) })
                else { return }
                await simulator.run(clock: clock)
            }
        }
        let live = ShopServices(
            catalog: PostgresCatalogService(database: database, feed: feed, now: now),
            favorites: PostgresFavoritesService(database: database, feed: feed, now: now),
            cart: PostgresCartService(database: database, feed: feed, now: now),
            orders: PostgresOrderService(database: database, feed: feed, now: now),
            recommendations: PostgresRecommendationService(database: database),
            accounts: PostgresAccountService(database: database, feed: feed, hasher: hasher, now: now, gate: HashingGate(limit: 2)),
            idempotency: PostgresIdempotencyService(database: database, feed: feed),
            events: events,
            notifications: PostgresNotificationService(database: database, feed: feed, events: events, now: now),
            analytics: PostgresAnalyticsService(database: database, clock: clock, now: now))
        return faults.isEmpty ? live : faults.wrapping(live, clock: clock, seed: faultSeed)
    }
}
