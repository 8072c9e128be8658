import Dispatch
import Foundation
import JSON
import Shop
import ShopStore

#if canImport(Glibc)
import Glibc
#endif

/// What recording analytics costs: the caller's time per `record` (in process, against the live recorder
/// writing to a database file meanwhile), and actions per second through servers with and without
/// recording (`serve --no-analytics`), interleaved in the same run.
extension StorefrontBench {
    /// Events recorded in the in-process measurement, in bursts of 100 with 1 ms between bursts (100 000
    /// events a second: above any action rate a server reaches, below the writer's batch rate).
    static let analyticsBurst = 100

    func analytics(_ path: String) throws -> [Measurement] {
        [try analyticsRecording()] + (try analyticsActions(path))
    }

    /// Nanoseconds per `record` call on the caller, each call timed alone (building the event included, as
    /// a ViewModel does), with the writer storing the earlier bursts meanwhile.
    func analyticsRecording() throws -> Measurement {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.path + "/analytics.sqlite")
        let analytics = LiveAnalyticsService(database: database)
        let shopper = Shopper.guest("storefront-bench")
        func record() {
            analytics.record(AnalyticsEvent(kind: .productViewed, productId: "p-0001", shopper: shopper, at: Date()))
        }
        for _ in 0..<1_000 { record() }
        Self.wait { await analytics.flush() }
        let before = analytics.counters

        // What the two clock reads around each call cost alone, reported beside the figures.
        var clockSamples: [Double] = []
        for _ in 0..<10_000 {
            let start = monotonicNanoseconds()
            clockSamples.append(Double(monotonicNanoseconds() - start))
        }
        let count = analyticsEvents
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let started = monotonicNanoseconds()
        while samples.count < count {
            for _ in 0..<min(Self.analyticsBurst, count - samples.count) {
                let start = monotonicNanoseconds()
                record()
                samples.append(Double(monotonicNanoseconds() - start))
            }
            usleep(1_000)
        }
        let wall = Double(monotonicNanoseconds() - started) / 1e9
        Self.wait { await analytics.flush() }
        let after = analytics.counters
        samples.sort()
        clockSamples.sort()
        return Measurement(
            name: "analytics/record", framing: .ndjson, runs: 1, count: count,
            figures: [
                ("p50Ns", percentile(50, of: samples), "ns"), ("p99Ns", percentile(99, of: samples), "ns"),
                ("p999Ns", percentile(99.9, of: samples), "ns"), ("maxUs", samples.last! / 1e3, "µs"),
                ("meanNs", samples.reduce(0, +) / Double(samples.count), "ns"),
                ("over10Us", Double(samples.count { $0 > 10_000 }), "calls"),
                ("clockNs", percentile(50, of: clockSamples), "ns (timer, included)"),
                ("stored", Double(after.stored - before.stored), "events"),
                ("dropped", Double(after.dropped - before.dropped), "events"),
                ("failed", Double(after.failed - before.failed), "events"),
                ("eventsPerSecond", Double(count) / wall, "/s"),
            ],
            peakRSSKiB: 0)
    }

    /// Actions per second with recording on and off, each server on a new database file, the two kinds of
    /// server alternating run by run: `productDetail/incrementQuantity`/`decrementQuantity` pipelined (no
    /// storage: the worst case for a fixed cost per action, each records `quantityChanged`), and
    /// `cart/setQuantity` one at a time (a durable write each, its analytics written beside it).
    func analyticsActions(_ path: String) throws -> [Measurement] {
        var steps: [Bool: [Double]] = [true: [], false: []]
        var writes: [Bool: [Double]] = [true: [], false: []]
        var peak = 0
        for run in 0..<domainRuns {
            for recording in run % 2 == 0 ? [true, false] : [false, true] {
                let folder = try TemporaryFolder()
                let session = try BenchSession(ServerChild(
                    path: path, framing: .ndjson,
                    arguments: ["--database", folder.path + "/shop.sqlite"] + (recording ? [] : ["--no-analytics"])))
                try session.initialize()
                let products = try productsAllowingTwo(session, count: 2)

                let (cart, _) = try session.open("cart")
                _ = try session.waitUntil(cart) { $0["phase"] == "loaded" }
                _ = try session.call("cart/add", ["viewModel": .string(cart), "productId": .string(products[1]), "quantity": 1])
                let writeStart = monotonicNanoseconds()
                for index in 0..<adds {
                    _ = try session.call("cart/setQuantity", [
                        "viewModel": .string(cart), "productId": .string(products[1]), "quantity": .integer(Int64(2 - index % 2)),
                    ])
                }
                writes[recording]!.append(Double(adds) / (Double(monotonicNanoseconds() - writeStart) / 1e9))

                let (detail, _) = try session.open("productDetail", ["productId": .string(products[0])])
                _ = try session.waitUntil(detail) { $0["phase"] == "loaded" }
                var bytes: [UInt8] = []
                let first: Int64 = 1_000_000
                for id in first..<(first + Int64(n)) {
                    let method = id % 2 == 0 ? "productDetail/incrementQuantity" : "productDetail/decrementQuantity"
                    let message: JSONValue = [
                        "jsonrpc": "2.0", "id": .integer(id), "method": .string(method), "params": ["viewModel": .string(detail)],
                    ]
                    session.child.framing.frame(message.serializedString(), into: &bytes)
                }
                let stepStart = monotonicNanoseconds()
                try session.child.pipeline(bytes, ids: first..<(first + Int64(n)))
                steps[recording]!.append(Double(n) / (Double(monotonicNanoseconds() - stepStart) / 1e9))
                peak = max(peak, try session.child.finish())
            }
        }
        func row(_ name: String, _ rates: [Bool: [Double]], count: Int) -> Measurement {
            let on = median(rates[true]!), off = median(rates[false]!)
            return Measurement(
                name: name, framing: .ndjson, runs: domainRuns, count: count,
                figures: [("withAnalytics", on, "/s"), ("withoutAnalytics", off, "/s"), ("ratio", on / off, "x")],
                peakRSSKiB: peak)
        }
        return [row("analytics/step", steps, count: n), row("analytics/cart", writes, count: adds)]
    }

    /// Runs `body` to its end from synchronous code (the benchmark's thread blocks meanwhile; `body` must not
    /// need it).
    static func wait(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await body()
            done.signal()
        }
        done.wait()
    }
}
