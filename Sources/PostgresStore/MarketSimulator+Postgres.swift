import Foundation
import Logging
import Shop
import ShopStore

/// The market simulation over PostgreSQL: the SQLite store's simulator (its walk, schedule and publishing
/// are engine-neutral), storing its changes with ``PostgresMarketStore``.
typealias PostgresMarketSimulator = MarketSimulator

extension MarketSimulator {
    /// A simulation over a PostgreSQL database with `settings`, publishing on `feed` (held weakly: the
    /// simulation stops once the services are released), dating changes with `now`.
    convenience init(database: PostgresShopDatabase, feed: ChangeFeed, settings: MarketSimulation, now: @escaping @Sendable () -> Date,
                     logger: Logger = Logger(label: "storefront.market")) {
        self.init(store: PostgresMarketStore(database: database), feed: feed, settings: settings, now: now, logger: logger)
    }
}
