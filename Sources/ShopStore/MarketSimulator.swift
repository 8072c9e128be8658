import Foundation
import GRDB
import Logging
import Randomness
import Shop

/// A market simulation: changes the prices and stock of the catalog's products as a seeded random walk,
/// `rate` changes per second on an injected clock. Each change is stored as a product edit is (the
/// product row, a price point, a change-log entry, the notifications it produces), so every server on
/// the database shows it; the changes of one tick are written in one transaction (1 000 changes per
/// second are then 100 transactions, which a file database keeps up with).
///
/// The walk: each change picks a product uniformly, moves its price by -2 % to +2 % (at least one cent,
/// within 0.01 … ``ProductRules/maximumPrice``), and one time in four its stock by -3 to +3 units (at
/// least 0). The same seed, catalog and ticks give the same changes.
@MainActor
final class MarketSimulator {
    /// Ticks per second at most: below 100 changes per second, one change per tick.
    nonisolated static let maximumTicksPerSecond = 100

    private let database: ShopDatabase
    private weak var feed: ChangeFeed?
    private let settings: MarketSimulation
    private let now: @Sendable () -> Date
    private let logger: Logger
    private var random: SeededRandom
    private var productIds: [String] = []
    /// Changes made so far.
    private(set) var changesMade = 0

    init(database: ShopDatabase, feed: ChangeFeed, settings: MarketSimulation, now: @escaping @Sendable () -> Date,
         logger: Logger = Logger(label: "storefront.market")) {
        self.database = database
        self.feed = feed
        self.settings = settings
        self.now = now
        self.logger = logger
        random = SeededRandom(seed: settings.seed)
    }

    /// The time between ticks.
    var tickInterval: Duration { .seconds(1) / ticksPerSecond }

    private var ticksPerSecond: Int { max(1, min(settings.rate, Self.maximumTicksPerSecond)) }

    /// How many changes tick number `tick` (from 1) makes: spread so that each second makes `rate`.
    func changes(inTick tick: Int) -> Int {
        tick * settings.rate / ticksPerSecond - (tick - 1) * settings.rate / ticksPerSecond
    }

    /// The ticks run to their end (changes stored and published), counted by ``run(clock:)``.
    private(set) var ticksRun = 0

    /// Runs the simulation until the task is cancelled or the feed (the services) is released.
    func run(clock: some Clock<Duration>) async {
        guard settings.rate > 0 else { return }
        let start = clock.now
        var tick = 0
        while !Task.isCancelled, feed != nil {
            tick += 1
            do { try await clock.sleep(until: start.advanced(by: tickInterval * tick), tolerance: nil) } catch { return }
            await self.tick(tick)
            ticksRun = tick
        }
    }

    /// Makes the changes of tick number `tick` in one transaction and publishes them.
    func tick(_ tick: Int) async {
        let count = changes(inTick: tick)
        guard count > 0 else { return }
        do {
            if productIds.isEmpty || tick % (ticksPerSecond * 5) == 0 {
                // The catalog is read again every 5 seconds: products come and go.
                productIds = try await database.writer.read { db in try String.fetchAll(db, sql: "SELECT id FROM product ORDER BY seq") }
            }
            guard !productIds.isEmpty else { return }
            let picks = (0..<count).map { _ in nextChange() }
            let date = now()
            let entries = try await database.write { db -> [(seq: Int64, events: [ShopEvent])] in
                var entries: [(seq: Int64, events: [ShopEvent])] = []
                for pick in picks {
                    guard let old = try StoredRows.product(db, id: pick.productId) else { continue }
                    var new = old
                    new.price = Self.walk(old.price, basisPoints: pick.priceStep)
                    new.stock = min(ProductRules.maximumStock, max(0, old.stock + pick.stockStep))
                    guard new != old else { continue }
                    entries += try ProductChangeRows.store(db, from: old, to: new, at: date)
                }
                return entries
            }
            changesMade += picks.count
            await feed?.committed(entries)
        } catch {
            logger.warning("the market simulation could not store a change", metadata: ["error": "\(error)"])
        }
    }

    /// The next change of the walk.
    private func nextChange() -> (productId: String, priceStep: Int, stockStep: Int) {
        let productId = productIds[Int(random.next() % UInt64(productIds.count))]
        let priceStep = Int(random.next() % 401) - 200
        let stockStep = random.next() % 4 == 0 ? Int(random.next() % 7) - 3 : 0
        return (productId, priceStep, stockStep)
    }

    /// `price` moved by `basisPoints` hundredths of a percent (at least a cent when not 0), within
    /// 0.01 … ``ProductRules/maximumPrice``.
    nonisolated static func walk(_ price: Money, basisPoints: Int) -> Money {
        var delta = price.minorUnits * Int64(basisPoints) / 10_000
        if delta == 0 && basisPoints != 0 { delta = basisPoints > 0 ? 1 : -1 }
        return Money(minorUnits: min(ProductRules.maximumPrice.minorUnits, max(1, price.minorUnits + delta)))
    }
}
