import Clocks
import Foundation
@testable import PostgresStore
import Shop
@testable import ShopStore
import TestWaits
import Testing

/// The market simulation on PostgreSQL: the SQLite simulator's walk, stored the same way, and nothing lost
/// when several servers simulate on one database.
@MainActor
@Suite(.enabled(if: TestPostgres.isAvailable, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster to test against (scripts/test.sh starts one)"))
struct PostgresMarketSimulatorTests {
    /// The same seed on the same catalog, with favourites that turn price drops and restocks into
    /// notifications: the same products, price points, events and change-log entries as in SQLite.
    @Test func theWalkIsStoredAsTheSQLiteSimulatorStoresIt() async throws {
        let twins = try await CatalogTwins.make()
        try await twins.addAccount()
        let favourites = try await twins.postgres.catalog.page(ProductQuery(limit: 30)).products.map(\.id)
        try await twins.onBoth { services in
            for id in favourites { try await services.favorites.setFavorite(productId: id, isFavorite: true, for: .account(1)) }
        }
        let settings = MarketSimulation(rate: 250, seed: 7)
        let postgres = PostgresMarketSimulator(database: twins.postgres.database, feed: twins.postgres.feed, settings: settings, now: { catalogTestNow })
        let sqliteFeed = ChangeFeed(database: twins.sqliteDatabase, events: twins.sqliteEvents)
        let sqlite = MarketSimulator(database: twins.sqliteDatabase, feed: sqliteFeed, settings: settings, now: { catalogTestNow })
        for tick in 1...60 {
            await postgres.tick(tick)
            await sqlite.tick(tick)
        }
        #expect(postgres.changesMade == 150 && sqlite.changesMade == 150)
        let events = twins.postgres.published.events
        #expect(events == twins.sqlitePublished.events)
        #expect(events.contains { if case .notificationArrived = $0 { true } else { false } })
        #expect(try await twins.postgres.logEntries() == (try await twins.sqliteLogEntries()))
        var changed: [String] = []
        for case .productChanged(let product) in events where !changed.contains(product.id) { changed.append(product.id) }
        #expect(changed.count > 50)
        for id in changed {
            #expect(try await twins.postgres.catalog.product(id: id) == (try await twins.sqlite.catalog.product(id: id)))
            #expect(try await twins.postgres.catalog.priceHistory(productId: id, limit: 1_000)
                == (try await twins.sqlite.catalog.priceHistory(productId: id, limit: 1_000)), "\(id)")
        }
    }

    /// Two servers simulate at once on a catalog of three products, so that their ticks keep changing the
    /// same products: every stock step of both walks is in the final stock (a change that read a product
    /// before the other server's commit, and overwrote it, would lose one), and every change stored its
    /// price point and its entry.
    @Test func simulatorsOnTwoServersLoseNoChange() async throws {
        let url = try await TestPostgres.freshURL()
        let servers = [CatalogServer(try await TestPostgres.open(url: url)), CatalogServer(try await TestPostgres.open(url: url))]
        let ids = try await servers[0].database.write { session in
            try await session.execute("DELETE FROM product WHERE seq > 3")
            try await session.execute("UPDATE product SET stock = 1000")
            return try await session.rows("SELECT id FROM product ORDER BY seq").map { try $0.decode(String.self) }
        }
        let pointsBefore = try await servers[0].database.read { try await $0.value("SELECT COUNT(*) FROM price_point", as: Int.self) ?? 0 }
        let settings = [MarketSimulation(rate: 1_000, seed: 1), MarketSimulation(rate: 1_000, seed: 2)]
        let ticks = 30
        let simulators = zip(servers, settings).map { server, settings in
            PostgresMarketSimulator(database: server.database, feed: server.feed, settings: settings, now: { catalogTestNow })
        }
        let running = simulators.map { simulator in
            Task { @MainActor in for tick in 1...ticks { await simulator.tick(tick) } }
        }
        for task in running { await task.value }
        #expect(simulators.map(\.changesMade) == [10 * ticks, 10 * ticks])  // no tick failed

        var expected = Dictionary(uniqueKeysWithValues: ids.map { ($0, 1_000) })
        for settings in settings {
            var walk = MarketWalk(seed: settings.seed)
            let schedule = MarketSchedule(settings)
            for tick in 1...ticks {
                for _ in 0..<schedule.changes(inTick: tick) {
                    let change = walk.nextChange(among: ids)
                    expected[change.productId, default: 0] += change.stockStep
                }
            }
        }
        let stocks = try await servers[0].database.read { session in
            try await session.rows("SELECT id, stock FROM product").map { try $0.decode((String, Int).self) }
        }
        #expect(Dictionary(uniqueKeysWithValues: stocks) == expected)
        let points = try await servers[0].database.read { try await $0.value("SELECT COUNT(*) FROM price_point", as: Int.self) ?? 0 }
        let changes = try await servers[0].logEntries().filter { $0.kind == "productChanged" }.count
        #expect(points - pointsBefore == changes && changes > 10 * ticks)
    }

    /// On its clock, the simulation makes each tick's changes at the tick's time, until it is cancelled.
    @Test func theSimulationTicksOnItsClockUntilCancelled() async throws {
        let server = CatalogServer(try await TestPostgres.freshDatabase())
        let clock = TestClock()
        let simulator = PostgresMarketSimulator(
            database: server.database, feed: server.feed, settings: MarketSimulation(rate: 200, seed: 3), now: { catalogTestNow })
        #expect(simulator.tickInterval == .milliseconds(10))
        let running = Task { await simulator.run(clock: clock) }
        for tick in 1...5 {
            await settle { await isSleeping(on: clock) }  // until the next tick
            await clock.advance(by: simulator.tickInterval)
            await settle { simulator.ticksRun == tick }
        }
        running.cancel()
        await running.value
        #expect(simulator.changesMade == 10)
        let changed = server.published.events.filter { if case .productChanged = $0 { true } else { false } }.count
        #expect(changed > 5 && changed <= 10)
        #expect(try await server.logEntries().count(where: { $0.kind == "productChanged" }) == changed)
    }
}
