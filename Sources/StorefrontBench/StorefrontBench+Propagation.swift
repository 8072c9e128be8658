import JSON

#if canImport(Glibc)
import Glibc
#endif

/// Several servers on one database file (issue 13): how soon one server shows another's change, what the
/// change log costs a write, what two writers on one file achieve, and what following the log costs an
/// idle server.
extension StorefrontBench {
    /// Products a round of cart changes adds one unit of each (then the cart is cleared, not timed).
    static let propagationProducts = 50

    /// Every figure of the propagation mode, each on new database files the servers create and seed.
    func propagation(_ path: String) throws -> [Measurement] {
        let folder = try TemporaryFolder()
        return [try crossProcessPropagation(path, database: folder.path + "/propagation.sqlite")]
            + (try changeLogCost(path, folder: folder.path))
            + [
                try twoServerThroughput(path, database: folder.path + "/two-servers.sqlite"),
                try idleCPU(path, database: folder.path + "/idle.sqlite"),
            ]
    }

    /// Two servers on one new file, signed in to one account, a cart open in each: `cart/add` sent to A, timed until B's
    /// `viewModel/changed` shows it in B's cart (B's mirror, patch applied, has the new item count). One
    /// at a time; before each send a random pause of 0 to 20 ms, so that sends fall at every phase of B's
    /// 20 ms poll (sent right after the previous change arrived, each would wait almost a whole interval).
    func crossProcessPropagation(_ path: String, database: String) throws -> Measurement {
        // A creates and seeds the file; B opens it once A has answered `initialize` (migrations done).
        let a = try domainSession(path, database: database)
        let b = try domainSession(path, database: database)
        // Each server is a session of its own: both sign in to one account, so that they show one cart.
        try b.resume(try a.signUp(email: "propagation@example.com"))
        let products = try inStockProducts(a, count: Self.propagationProducts)
        let (cartA, _) = try a.open("cart")
        let (cartB, _) = try b.open("cart")
        _ = try a.waitUntil(cartA) { $0["phase"] == "loaded" }
        _ = try b.waitUntil(cartB) { $0["phase"] == "loaded" }
        var random = SplitMix64(seed: 13)
        var propagated: [Double] = []
        var answered: [Double] = []
        while propagated.count < propagationSamples {
            for product in products where propagated.count < propagationSamples {
                let expected = Self.itemCount(b.mirrors[cartB]) + 1
                pause(nanoseconds: random.next() % 20_000_000)
                let start = monotonicNanoseconds()
                let id = try a.send("cart/add", ["viewModel": .string(cartA), "productId": .string(product), "quantity": 1])
                var answerTime: UInt64?
                var shownTime: UInt64?
                try BenchSession.pump([a, b], until: { answerTime != nil && shownTime != nil }) { index, message, change in
                    if index == 0, change == nil {
                        guard message["id"] == .integer(id), message["result"] != nil else {
                            throw BenchError(description: "cart/add on server A answered \(message)")
                        }
                        answerTime = monotonicNanoseconds()
                    } else if index == 1, change?.viewModel == cartB, Self.itemCount(b.mirrors[cartB]) == expected {
                        shownTime = monotonicNanoseconds()
                    }
                }
                answered.append(Double(answerTime! - start) / 1e6)
                propagated.append(Double(shownTime! - start) / 1e6)
            }
            // Not timed: empty the cart and let B show it, so that nothing is in flight when a round starts.
            _ = try a.call("cart/clear", ["viewModel": .string(cartA)])
            _ = try b.waitUntil(cartB) { Self.itemCount($0) == 0 }
        }
        _ = try a.child.finish()
        let peak = try b.child.finish()
        propagated.sort()
        answered.sort()
        return Measurement(
            name: "propagate", framing: .ndjson, runs: 1, count: propagated.count,
            figures: [
                ("p50Ms", percentile(50, of: propagated), "ms"), ("p90Ms", percentile(90, of: propagated), "ms"),
                ("p99Ms", percentile(99, of: propagated), "ms"), ("maxMs", propagated.last!, "ms"),
                ("answerP50Ms", percentile(50, of: answered), "ms (A's own answer)"),
            ], peakRSSKiB: peak)
    }

    /// Durable `cart/add` one at a time: the storage floor (``CartWriteFloor``) without the change log,
    /// with it, and with the feed's read-back, and the server's own, interleaved in blocks of 50 (each
    /// followed by an untimed clear) so that a change in the machine's load touches all four alike, after 400
    /// untimed writes to each file. Rows: rates over all writes (what a slow sync now and then costs
    /// counts), the median write, and the floor's median write on a file that does not sync
    /// (`synchronous = OFF`, also interleaved): the statements' own cost, which the disk's noise cannot hide.
    func changeLogCost(_ path: String, folder: String) throws -> [Measurement] {
        let floorPath = folder + "/floor.sqlite"
        let unsyncedPath = folder + "/floor-unsynced.sqlite"
        for file in [floorPath, unsyncedPath] {
            _ = try ServerChild(path: path, framing: .ndjson, arguments: ["--database", file]).finish()  // creates and seeds it
        }
        let session = try domainSession(path, database: folder + "/server.sqlite")
        let products = try inStockProducts(session, count: Self.propagationProducts)
        let (cart, _) = try session.open("cart")
        _ = try session.waitUntil(cart) { $0["phase"] == "loaded" }
        let floor = try CartWriteFloor(path: floorPath)
        let unsynced = try CartWriteFloor(path: unsyncedPath, syncs: false)
        // Not timed: enough writes for each write-ahead log to fill and start over (SQLite restarts it after a
        // checkpoint at 1 000 pages, ~250 writes). While a log grows, each commit's sync also writes the file's
        // new size (an ext4 journal commit, several times slower); a server that has run a while writes
        // over the log's blocks, as every measured write below then does.
        for _ in 0..<8 {
            for writer in [floor, unsynced] {
                for product in products { _ = try writer.add(product, .withLog) }
                try writer.clear()
            }
            for product in products {
                _ = try session.call("cart/add", ["viewModel": .string(cart), "productId": .string(product), "quantity": 1])
            }
            _ = try session.call("cart/clear", ["viewModel": .string(cart)])
        }

        let withoutLog = CartWriteFloor.Variant.withoutLog.rawValue
        let withLog = CartWriteFloor.Variant.withLog.rawValue
        let withReadBack = CartWriteFloor.Variant.withLogAndReadBack.rawValue
        let unsyncedVariants = CartWriteFloor.Variant.allCases.map { "unsynced-" + $0.rawValue }
        let variants = [withoutLog, withLog, withReadBack, "server"] + unsyncedVariants
        var samples = [String: [Double]](uniqueKeysWithValues: variants.map { ($0, []) })
        let blocks = max(1, adds / products.count)
        for block in 0..<blocks {
            for offset in 0..<variants.count {
                let variant = variants[(block + offset) % variants.count]
                let isUnsynced = variant.hasPrefix("unsynced-")
                if let floorVariant = CartWriteFloor.Variant(rawValue: isUnsynced ? String(variant.dropFirst(9)) : variant) {
                    let writer = isUnsynced ? unsynced : floor
                    for product in products { samples[variant]!.append(Double(try writer.add(product, floorVariant)) / 1e3) }
                    try writer.clear()
                } else {
                    for product in products {
                        let reply = try session.call(
                            "cart/add", ["viewModel": .string(cart), "productId": .string(product), "quantity": 1])
                        samples[variant]!.append(Double(reply.nanoseconds) / 1e3)
                    }
                    _ = try session.call("cart/clear", ["viewModel": .string(cart)])
                }
            }
        }
        let peak = try session.child.finish()
        func rate(_ variant: String) -> Double { Double(samples[variant]!.count) / (samples[variant]!.reduce(0, +) / 1e6) }
        func p50(_ variant: String) -> Double { median(samples[variant]!) }
        let count = blocks * products.count
        return [
            Measurement(
                name: "log-cost", framing: .ndjson, runs: blocks, count: count,
                figures: [
                    ("floorWithoutLog", rate(withoutLog), "/s"), ("floorWithLog", rate(withLog), "/s"),
                    ("ratio", rate(withLog) / rate(withoutLog), ""), ("floorWithReadBack", rate(withReadBack), "/s"),
                    ("server", rate("server"), "/s one at a time"),
                ], peakRSSKiB: peak),
            Measurement(
                name: "log-p50", framing: .ndjson, runs: blocks, count: count,
                figures: [
                    ("floorWithoutLog", p50(withoutLog), "µs"), ("floorWithLog", p50(withLog), "µs"),
                    ("added", p50(withLog) - p50(withoutLog), "µs"), ("floorWithReadBack", p50(withReadBack), "µs"),
                    ("server", p50("server"), "µs"),
                ], peakRSSKiB: peak),
            Measurement(
                name: "log-nosync", framing: .ndjson, runs: blocks, count: count,
                figures: [
                    ("floorWithoutLog", p50(unsyncedVariants[0]), "µs"), ("floorWithLog", p50(unsyncedVariants[1]), "µs"),
                    ("added", p50(unsyncedVariants[1]) - p50(unsyncedVariants[0]), "µs"),
                    ("floorWithReadBack", p50(unsyncedVariants[2]), "µs (medians, synchronous=OFF)"),
                ], peakRSSKiB: peak),
        ]
    }

    /// Pipelined `cart/add` in rounds of 50 (one unit of 50 products, then an untimed clear): all from one
    /// client to one server, against 25 + 25 written at the same moment by two clients to two servers on
    /// the same file, signed in to one account (each server also following the other's changes). Alternated `domainRuns` times;
    /// medians.
    func twoServerThroughput(_ path: String, database: String) throws -> Measurement {
        let a = try domainSession(path, database: database)
        // Every B signs in to A's account, so that both write one cart (A's clear empties it for both).
        let account = try a.signUp(email: "two-servers@example.com")
        let products = try inStockProducts(a, count: Self.propagationProducts)
        let (cartA, _) = try a.open("cart")
        _ = try a.waitUntil(cartA) { $0["phase"] == "loaded" }
        let rounds = max(1, adds / products.count / domainRuns)
        var one: [Double] = []
        var two: [Double] = []
        var peak = 0
        for _ in 0..<domainRuns {
            one.append(try pipelinedRounds(rounds, [(a, cartA, products)]))

            let b = try domainSession(path, database: database)
            try b.resume(account)
            let (cartB, _) = try b.open("cart")
            _ = try b.waitUntil(cartB) { $0["phase"] == "loaded" }
            let half = products.count / 2
            two.append(try pipelinedRounds(
                rounds, [(a, cartA, Array(products[..<half])), (b, cartB, Array(products[half...]))]))
            peak = max(peak, try b.child.finish())
        }
        peak = max(peak, try a.child.finish())
        let oneRate = median(one)
        let twoRate = median(two)
        return Measurement(
            name: "2-servers", framing: .ndjson, runs: domainRuns, count: rounds * products.count,
            figures: [("oneServer", oneRate, "/s pipelined"), ("twoServers", twoRate, "/s pipelined"), ("ratio", twoRate / oneRate, "")],
            peakRSSKiB: peak)
    }

    /// `rounds` rounds: each writer writes one `cart/add` per product of its share at once, then every
    /// answer is read (from all servers as they come); then the cart is cleared through the first and every
    /// mirror waits for the empty cart (not timed). Returns adds per second over the timed part.
    private func pipelinedRounds(_ rounds: Int, _ writers: [(session: BenchSession, cart: String, products: [String])]) throws -> Double {
        var timed: UInt64 = 0
        let total = writers.map(\.products.count).reduce(0, +)
        for _ in 0..<rounds {
            let start = monotonicNanoseconds()
            var waiting = Set<Int64>()
            var owner: [Int64: Int] = [:]
            for (index, writer) in writers.enumerated() {
                let ids = try writer.session.sendAll(writer.products.map {
                    ("cart/add", ["viewModel": .string(writer.cart), "productId": .string($0), "quantity": 1])
                })
                for id in ids { owner[id] = index }
                waiting.formUnion(ids)
            }
            try BenchSession.pump(writers.map(\.session), until: { waiting.isEmpty }) { index, message, change in
                guard change == nil else { return }
                guard let id = message["id"]?.integerValue, owner[id] == index, waiting.remove(id) != nil, message["result"] != nil else {
                    throw BenchError(description: "unexpected answer from server \(index): \(message)")
                }
            }
            timed += monotonicNanoseconds() - start
            _ = try writers[0].session.call("cart/clear", ["viewModel": .string(writers[0].cart)])
            for writer in writers { _ = try writer.session.waitUntil(writer.cart) { Self.itemCount($0) == 0 } }
        }
        return Double(rounds * total) / (Double(timed) / 1e9)
    }

    /// CPU time of idle servers over `idleSeconds`, side by side: one on a database file (it polls the
    /// change log every 20 ms) and one on `:memory:` (nothing to follow, so no poll). Initialised, nothing
    /// open, nothing sent while measured. Both as ticks (`/proc/<pid>/stat`, sampled) and as the exact time
    /// on a CPU (`schedstat`), with the context switches a second (the wake-ups).
    func idleCPU(_ path: String, database: String) throws -> Measurement {
        let following = try domainSession(path, database: database)
        let inMemory = try domainSession(path, database: ":memory:")
        let before = (try following.child.cpuTicks(), try inMemory.child.cpuTicks())
        let scheduledBefore = (try following.child.schedulerFigures(), try inMemory.child.schedulerFigures())
        let start = monotonicNanoseconds()
        pause(nanoseconds: UInt64(idleSeconds) * 1_000_000_000)
        let after = (try following.child.cpuTicks(), try inMemory.child.cpuTicks())
        let scheduledAfter = (try following.child.schedulerFigures(), try inMemory.child.schedulerFigures())
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let peak = try following.child.finish()
        _ = try inMemory.child.finish()
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        func millisecondsPerSecond(_ ticks: Int) -> Double { Double(ticks) / ticksPerSecond * 1000 / seconds }
        let followingRates = scheduledAfter.0.rates(since: scheduledBefore.0, seconds: seconds)
        let inMemoryRates = scheduledAfter.1.rates(since: scheduledBefore.1, seconds: seconds)
        return Measurement(
            name: "idle-cpu", framing: .ndjson, runs: 1, count: Int(seconds.rounded()),
            figures: [
                ("followingFile", millisecondsPerSecond(after.0 - before.0), "ms CPU/s"),
                ("inMemory", millisecondsPerSecond(after.1 - before.1), "ms CPU/s"),
                ("followingFileOnCPU", followingRates.onCPUMillisecondsPerSecond, "ms/s"),
                ("inMemoryOnCPU", inMemoryRates.onCPUMillisecondsPerSecond, "ms/s"),
                ("followingFileSwitches", followingRates.switchesPerSecond, "/s"),
                ("inMemorySwitches", inMemoryRates.switchesPerSecond, "/s"),
            ], peakRSSKiB: peak)
    }

    /// `totals.itemCount` of a cart state (0 when absent).
    static func itemCount(_ state: JSONValue?) -> Int64 {
        state?["totals"]?["itemCount"]?.integerValue ?? 0
    }
}

/// Sleeps for `nanoseconds` (the whole time, even when a signal interrupts it).
func pause(nanoseconds: UInt64) {
    var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// A small deterministic generator (SplitMix64), so that a run's pauses can be repeated.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
