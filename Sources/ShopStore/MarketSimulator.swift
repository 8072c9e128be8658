import Foundation
import Logging
import Shop

/// A market simulation: changes the prices and stock of the catalog's products as a seeded random walk
/// (``MarketWalk``), `rate` changes per second on an injected clock (``MarketSchedule``). Each change is
/// stored as a product edit is (the product row, a price point, a change-log entry, the notifications it
/// produces), so every server on the database shows it; the changes of one tick are written in one
/// transaction (1 000 changes per second are then 100 transactions, which a file database keeps up with).
/// The same seed, catalog and ticks give the same changes.
///
/// The same simulator runs on both engines; each provides its ``MarketStore`` (``SQLiteMarketStore`` here,
/// `PostgresMarketStore` in PostgresStore).
@MainActor
package final class MarketSimulator {
    /// Ticks per second at most: below 100 changes per second, one change per tick.
    package nonisolated static let maximumTicksPerSecond = MarketSchedule.maximumTicksPerSecond

    private let store: any MarketStore
    private weak var feed: ChangeFeed?
    private let schedule: MarketSchedule
    private let now: @Sendable () -> Date
    private let logger: Logger
    private var walk: MarketWalk
    private var productIds: [String] = []
    /// Changes made so far (picks applied, including those that moved nothing).
    package private(set) var changesMade = 0
    /// The ticks run to their end (changes stored and published), counted by ``run(clock:)``.
    package private(set) var ticksRun = 0

    /// A simulation storing its changes in `store` with `settings`, publishing them on `feed` (held weakly:
    /// the simulation stops once the services are released), dating them with `now`.
    package init(store: any MarketStore, feed: ChangeFeed, settings: MarketSimulation, now: @escaping @Sendable () -> Date,
                 logger: Logger = Logger(label: "storefront.market")) {
        self.store = store
        self.feed = feed
        schedule = MarketSchedule(settings)
        self.now = now
        self.logger = logger
        walk = MarketWalk(seed: settings.seed)
    }

    /// A simulation over a SQLite database.
    convenience init(database: ShopDatabase, feed: ChangeFeed, settings: MarketSimulation, now: @escaping @Sendable () -> Date,
                     logger: Logger = Logger(label: "storefront.market")) {
        self.init(store: SQLiteMarketStore(database: database), feed: feed, settings: settings, now: now, logger: logger)
    }

    /// The time between ticks.
    package var tickInterval: Duration { schedule.tickInterval }

    /// How many changes tick number `tick` (from 1) makes: spread so that each second makes `rate`.
    func changes(inTick tick: Int) -> Int {
        schedule.changes(inTick: tick)
    }

    /// Runs the simulation until the task is cancelled or the feed (the services) is released.
    package func run(clock: any Clock<Duration>) async {
        await schedule.run(clock: clock, while: { feed != nil }) { tick in
            await self.tick(tick)
            ticksRun = tick
        }
    }

    /// Makes the changes of tick number `tick` in one transaction and publishes them. A failure (the
    /// database unavailable) is logged and the tick's changes are skipped: the walk goes on with the next.
    package func tick(_ tick: Int) async {
        let count = changes(inTick: tick)
        guard count > 0 else { return }
        do {
            if schedule.readsCatalog(inTick: tick, knowingProducts: !productIds.isEmpty) {
                productIds = try await store.productIds()
            }
            guard !productIds.isEmpty else { return }
            let picks = (0..<count).map { _ in walk.nextChange(among: productIds) }
            let entries = try await store.store(picks, at: now())
            changesMade += picks.count
            await feed?.committed(entries)
        } catch {
            logger.warning("the market simulation could not store a change", metadata: ["error": "\(error)"])
        }
    }

    /// `price` moved by `basisPoints` hundredths of a percent (at least a cent when not 0), within
    /// 0.01 … ``ProductRules/maximumPrice``.
    nonisolated static func walk(_ price: Money, basisPoints: Int) -> Money {
        MarketWalk.walk(price, basisPoints: basisPoints)
    }
}
