import Credentials
import Foundation
import Shop

extension ShopServices {
    /// The composition root's factory: every service over `database`, publishing on `events`, with
    /// `faults` injected in front of them (none by default).
    ///
    /// - Parameters:
    ///   - database: The opened database.
    ///   - faults: Latency and failures to inject; ``FaultPlan/none`` for normal operation.
    ///   - clock: The clock injected latency waits on, and the analytics recorder's batch window.
    ///   - faultSeed: Seeds the choice of failing calls, so a run can be repeated exactly.
    ///   - events: The change feed the services publish to and the ViewModels subscribe to.
    ///   - now: The current date, for order and product creation dates, sessions and sign-in locks.
    ///   - hasher: How passwords are hashed (``PasswordHasher/Cost/standard`` unless a test asks cheaper).
    ///   - followingOtherProcesses: how often to look for changes other processes stored in a database
    ///     file (nil: never, as for a database only this process uses). The poll stops when the services
    ///     are released.
    ///   - market: a market simulation to run on `clock` (nil: none, the default); it stops when the
    ///     services are released.
    ///   - taskExecutor: the executor the poll of other processes' changes prefers (the server's main-queue
    ///     executor); nil: none.
    /// - Returns: The services and the feed.
    public static func live(
        database: ShopDatabase,
        faults: FaultPlan = .none,
        clock: any Clock<Duration> = ContinuousClock(),
        faultSeed: UInt64 = 42,
        events: ShopEvents = ShopEvents(),
        now: @escaping @Sendable () -> Date = { Date() },
        hasher: PasswordHasher = PasswordHasher(),
        followingOtherProcesses interval: Duration? = nil,
        market: MarketSimulation? = nil,
        taskExecutor: (any TaskExecutor)? = nil
    ) -> ShopServices {
        let feed = ChangeFeed(database: database, events: events)
        if let interval, database.path != ":memory:" { _ = feed.follow(every: interval, clock: clock, taskExecutor: taskExecutor) }
        if let market {
            // The simulator holds the feed weakly: released services end it.
            Task { @MainActor [weak feed] in
                guard let simulator = feed.map({ MarketSimulator(database: database, feed: $0, settings: market, now: now) })
                else { return }
                await simulator.run(clock: clock)
            }
        }
        let live = ShopServices(
            catalog: LiveCatalogService(database: database, feed: feed, now: now),
            favorites: LiveFavoritesService(database: database, feed: feed, now: now),
            cart: LiveCartService(database: database, feed: feed, now: now),
            orders: LiveOrderService(database: database, feed: feed, now: now),
            recommendations: LiveRecommendationService(database: database),
            accounts: LiveAccountService(database: database, feed: feed, hasher: hasher, now: now, gate: HashingGate(limit: 2)),
            idempotency: LiveIdempotencyService(database: database, feed: feed),
            events: events,
            notifications: LiveNotificationService(database: database, feed: feed, events: events, now: now),
            analytics: LiveAnalyticsService(database: database, clock: clock, now: now))
        return faults.isEmpty ? live : faults.wrapping(live, clock: clock, seed: faultSeed)
    }
}

extension FaultPlan {
    /// `services` behind decorators that inject this plan's faults.
    /// - Parameters:
    ///   - services: The services to wrap; the feed is kept as it is.
    ///   - clock: The clock latency waits on.
    ///   - seed: Seeds the choice of failing calls.
    public func wrapping(_ services: ShopServices, clock: any Clock<Duration>, seed: UInt64) -> ShopServices {
        let injector = FaultInjector(plan: self, clock: clock, seed: seed)
        return ShopServices(
            catalog: FaultInjectingCatalogService(base: services.catalog, injector: injector),
            favorites: FaultInjectingFavoritesService(base: services.favorites, injector: injector),
            cart: FaultInjectingCartService(base: services.cart, injector: injector),
            orders: FaultInjectingOrderService(base: services.orders, injector: injector),
            recommendations: FaultInjectingRecommendationService(base: services.recommendations, injector: injector),
            accounts: FaultInjectingAccountService(base: services.accounts, injector: injector),
            idempotency: services.idempotency,
            events: services.events,
            notifications: FaultInjectingNotificationService(base: services.notifications, injector: injector),
            analytics: FaultInjectingAnalyticsService(base: services.analytics, injector: injector))
    }
}
