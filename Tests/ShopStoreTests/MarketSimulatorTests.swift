import Clocks
import Foundation
import GRDB
import Shop
import TestWaits
import Testing
@testable import ShopStore

/// The market simulation: a seeded random walk on an injected clock, stored like real edits.
@Suite @MainActor struct MarketSimulatorTests {
    /// Runs a simulation of `rate` changes per second with `seed` for `seconds` of test time on a new
    /// database; returns every product's stored history and the events published.
    func simulate(rate: Int, seed: UInt64, seconds: Int) async throws -> (history: [String: [PricePoint]], events: [ShopEvent], changes: Int) {
        let database = try ShopDatabase(path: ":memory:")
        let events = ShopEvents()
        let recorder = EventRecorder(events)
        let feed = ChangeFeed(database: database, events: events)
        let clock = TestClock()
        let simulator = MarketSimulator(
            database: database, feed: feed, settings: MarketSimulation(rate: rate, seed: seed), now: { fixedNow })
        let run = Task { await simulator.run(clock: clock) }
        for tick in 1...(seconds * min(rate, MarketSimulator.maximumTicksPerSecond)) {
            // The simulator sleeps again after each tick's write: move the clock only once it does (a sleep
            // registered at its own deadline, just after the clock got there, would wait for the next move).
            await settleUntilSleeping(clock)
            await clock.advance(by: simulator.tickInterval)
            // The tick's changes stored and published: the simulator goes back to sleep at once.
            await settle { simulator.ticksRun == tick }
            let expected = (1...tick).reduce(0) { $0 + simulator.changes(inTick: $1) }
            #expect(simulator.changesMade == expected)
        }
        run.cancel()
        await run.value
        withExtendedLifetime(feed) {}  // the simulator holds it weakly, and stops once it is released
        let history = try await database.writer.read { db in
            Dictionary(grouping: try Row.fetchAll(db, sql: "SELECT productId, price, stock, at FROM price_point ORDER BY seq")) { $0[0] as String }
                .mapValues { $0.map { PricePoint(price: Money(minorUnits: $0[1]), stock: $0[2], at: StoredDate.date($0[3])) } }
        }
        return (history, recorder.events, simulator.changesMade)
    }

    @Test func theSameSeedGivesTheSameWalkAndEachChangeIsAPricePointAndAnEvent() async throws {
        let first = try await simulate(rate: 250, seed: 7, seconds: 2)
        let again = try await simulate(rate: 250, seed: 7, seconds: 2)
        #expect(first.changes == 500)
        #expect(first.history == again.history)
        #expect(first.events == again.events)
        // Each change published its product as stored, and added one point to its history (besides the
        // point each product starts with).
        let points = first.history.values.reduce(0) { $0 + $1.count - 1 }
        let changed = first.events.filter { if case .productChanged = $0 { true } else { false } }
        #expect(points == changed.count)
        #expect(changed.count > 450)  // a change that moves nothing (a 1-cent price going down) stores nothing
        // Besides, a product whose stock goes from 0 to more is said to be back in stock.
        #expect(first.events.allSatisfy { event in
            switch event {
            case .productChanged, .productRestocked: true
            default: false
            }
        })
        // Each product's last event shows what its history ends with.
        var last: [String: Product] = [:]
        for case .productChanged(let product) in first.events { last[product.id] = product }
        for (id, product) in last {
            #expect(first.history[id]?.last.map { PricePoint(price: product.price, stock: product.stock, at: $0.at) } == first.history[id]?.last)
        }
        let other = try await simulate(rate: 250, seed: 8, seconds: 2)
        #expect(other.history != first.history)
    }

    @Test func changesAreSpreadOverTheTicksOfEachSecond() {
        let simulator = { (rate: Int) in
            MarketSimulator(
                database: try! ShopDatabase(path: ":memory:"), feed: ChangeFeed(database: try! ShopDatabase(path: ":memory:"), events: ShopEvents()),
                settings: MarketSimulation(rate: rate, seed: 1), now: { fixedNow })
        }
        let thousand = simulator(1_000)
        #expect(thousand.tickInterval == .milliseconds(10))
        #expect((1...100).map(thousand.changes(inTick:)) == Array(repeating: 10, count: 100))
        let odd = simulator(150)
        #expect((1...100).reduce(0) { $0 + odd.changes(inTick: $1) } == 150)
        let slow = simulator(4)
        #expect(slow.tickInterval == .milliseconds(250))
        #expect((1...4).map(slow.changes(inTick:)) == [1, 1, 1, 1])
        #expect(MarketSimulator.walk(Money(minorUnits: 1), basisPoints: -200) == Money(minorUnits: 1))
        #expect(MarketSimulator.walk(Money(minorUnits: 10_000), basisPoints: 150) == Money(minorUnits: 10_150))
        #expect(MarketSimulator.walk(Money(minorUnits: 10), basisPoints: 1) == Money(minorUnits: 11))
    }
}
