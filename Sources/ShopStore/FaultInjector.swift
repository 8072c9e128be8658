import Randomness
import Shop

/// Applies a ``FaultPlan`` to calls: waits the latency on the injected clock, then fails the share of
/// calls the plan says with ``ShopError`` `serviceUnavailable` (retryable) before they reach the
/// service, so a failed call never changes anything. Deterministic for a given seed: each service
/// draws from its own generator, so whether a call fails depends only on how many calls to the same
/// service came before it.
final class FaultInjector: Sendable {
    private let plan: FaultPlan
    private let clock: any Clock<Duration>
    private let random: [ShopServiceName: Locked<SeededRandom>]

    init(plan: FaultPlan, clock: any Clock<Duration>, seed: UInt64) {
        self.plan = plan
        self.clock = clock
        self.random = Dictionary(uniqueKeysWithValues: ShopServiceName.allCases.enumerated().map { index, service in
            (service, Locked(SeededRandom(seed: seed &+ UInt64(index) &* 0x1000_0000_01B3)))
        })
    }

    /// Runs `call` for `service` with the plan's faults.
    func perform<T>(_ service: ShopServiceName, _ call: () async throws -> T) async throws -> T {
        guard let fault = plan.faults[service] else { return try await call() }
        let fails = fault.failureRate > 0
            && random[service]!.withLock { Double.random(in: 0..<1, using: &$0) } < fault.failureRate
        if fault.latency > .zero {
            try await clock.sleep(for: fault.latency)
        }
        if fails { throw ShopError.serviceUnavailable(service.rawValue) }
        return try await call()
    }
}
