import Shop
import Testing
@testable import ShopStore

/// A clock whose sleeps return at once and are recorded.
final class RecordingClock: Clock, @unchecked Sendable {
    private let sleeps = Locked<[Duration]>([])
    var recorded: [Duration] { sleeps.withLock { $0 } }
    let now = ContinuousClock.now
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        sleeps.withLock { $0.append(now.duration(to: deadline)) }
    }
}

@Suite struct FaultPlanTests {
    @Test func parsesServicesAndSettings() throws {
        let plan = try FaultPlan(parsing: " catalog:latency=300ms, failure-rate=0.2 ; cart:failure-rate=0.5;;orders:latency=1.5s")
        #expect(plan == FaultPlan(faults: [
            .catalog: Fault(latency: .milliseconds(300), failureRate: 0.2),
            .cart: Fault(failureRate: 0.5),
            .orders: Fault(latency: .milliseconds(1_500)),
        ]))
        #expect(try FaultPlan(parsing: "").isEmpty)
        let everything = try FaultPlan(parsing: "*:latency=10ms;cart:latency=0ms")
        #expect(everything.faults.count == ShopServiceName.allCases.count)
        #expect(everything.faults[.cart] == Fault())
        #expect(everything.faults[.recommendations] == Fault(latency: .milliseconds(10)))
    }

    @Test(arguments: [
        "catalogue:latency=1ms", "pricing:latency=1ms", "catalog", "catalog:latency", "catalog:latency=10", "catalog:latency=-1ms",
        "catalog:latency=fast", "catalog:failure-rate=1.5", "catalog:failure-rate=x", "catalog:speed=1",
        "catalog:failure-rate=nan",
    ])
    func rejectsMalformedSpecs(spec: String) {
        #expect(throws: FaultPlanError.self) { try FaultPlan(parsing: spec) }
    }

    @Test func failuresAreDeterministicForASeed() async throws {
        let plan = try FaultPlan(parsing: "cart:failure-rate=0.5")
        let database = try ShopDatabase(path: ":memory:")
        func outcomes(seed: UInt64) async throws -> [Bool] {
            let services = ShopServices.live(database: database, faults: plan, clock: RecordingClock(), faultSeed: seed)
            var outcomes: [Bool] = []
            for _ in 0..<40 {
                do {
                    _ = try await services.cart.cart(of: .testShopper)
                    outcomes.append(true)
                } catch let error as ShopError where error.reason == "serviceUnavailable" {
                    #expect(error.isRetryable)
                    #expect(error.details["service"] == "cart")
                    outcomes.append(false)
                }
            }
            return outcomes
        }
        let first = try await outcomes(seed: 7)
        #expect(try await outcomes(seed: 7) == first)
        #expect(first.contains(true))
        #expect(first.contains(false))
        #expect(try await outcomes(seed: 8) != first)
    }

    @Test func aFailedCallChangesNothing() async throws {
        let database = try ShopDatabase(path: ":memory:")
        let failing = ShopServices.live(database: database, faults: try FaultPlan(parsing: "*:failure-rate=1"))
        let recorder = await EventRecorder(failing.events)
        let error = await #expect(throws: ShopError.self) { try await failing.cart.add(productId: "p-0001", quantity: 1, for: .testShopper) }
        #expect(error?.reason == "serviceUnavailable")
        await #expect(throws: ShopError.self) { try await failing.favorites.setFavorite(productId: "p-0001", isFavorite: true, for: .testShopper) }
        let healthy = ShopServices.live(database: database)
        #expect(try await healthy.cart.cart(of: .testShopper).isEmpty)
        #expect(try await !healthy.favorites.isFavorite(productId: "p-0001", for: .testShopper))
        #expect(await recorder.events.isEmpty)
    }

    @Test func latencyWaitsOnTheInjectedClockForTheNamedServiceOnly() async throws {
        let clock = RecordingClock()
        let services = ShopServices.live(
            database: try ShopDatabase(path: ":memory:"),
            faults: try FaultPlan(parsing: "catalog:latency=300ms;orders:latency=2s"), clock: clock)
        _ = try await services.catalog.product(id: "p-0001")
        _ = try await services.cart.cart(of: .testShopper)
        _ = try await services.orders.recentOrders(limit: 1, of: .testShopper)
        #expect(clock.recorded == [.milliseconds(300), .seconds(2)])
    }

    @Test func anOrdersOutagePlacesNoOrder() async throws {
        let database = try ShopDatabase(path: ":memory:")
        let healthy = ShopServices.live(database: database)
        try await healthy.cart.add(productId: "p-0001", quantity: 1, for: .testShopper)
        let failing = ShopServices.live(database: database, faults: try FaultPlan(parsing: "orders:failure-rate=1"))
        let error = await #expect(throws: ShopError.self) { try await failing.orders.placeOrder(expectedRevision: nil, for: .testShopper) }
        #expect(error?.details["service"] == "orders")
        #expect(try await healthy.orders.recentOrders(limit: 5, of: .testShopper).isEmpty)
        #expect(try await healthy.cart.cart(of: .testShopper).itemCount == 1)
    }
}
