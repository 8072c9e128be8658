import Shop

/// When a market simulation changes prices: `rate` changes per second, spread over at most
/// ``maximumTicksPerSecond`` ticks, on an injected clock. Shared by the simulators of both stores (each
/// stores a tick's changes in one transaction of its engine).
package struct MarketSchedule: Equatable, Sendable {
    /// Ticks per second at most: below 100 changes per second, one change per tick.
    package static let maximumTicksPerSecond = 100

    /// Changes per second.
    package let rate: Int

    /// The schedule of `settings`.
    package init(_ settings: MarketSimulation) {
        rate = settings.rate
    }

    /// The time between ticks.
    package var tickInterval: Duration { .seconds(1) / ticksPerSecond }

    private var ticksPerSecond: Int { max(1, min(rate, Self.maximumTicksPerSecond)) }

    /// How many changes tick number `tick` (from 1) makes: spread so that each second makes `rate`.
    package func changes(inTick tick: Int) -> Int {
        tick * rate / ticksPerSecond - (tick - 1) * rate / ticksPerSecond
    }

    /// Whether tick number `tick` reads the catalog's product ids again before its changes: every 5
    /// seconds, since products come and go (and always when none are known yet).
    package func readsCatalog(inTick tick: Int, knowingProducts known: Bool) -> Bool {
        !known || tick % (ticksPerSecond * 5) == 0
    }

    /// Runs `tick` with 1, 2, 3… each at its time on `clock` (measured from the start, so a slow tick does
    /// not delay the later ones), until the task is cancelled or `isRunning` returns false. Does nothing
    /// when the rate is 0.
    package func run(clock: some Clock<Duration>, while isRunning: () -> Bool, tick: (Int) async -> Void) async {
        guard rate > 0 else { return }
        let start = clock.now
        var number = 0
        while !Task.isCancelled, isRunning() {
            number += 1
            do { try await clock.sleep(until: start.advanced(by: tickInterval * number), tolerance: nil) } catch { return }
            await tick(number)
        }
    }
}
