import JSON

#if canImport(Glibc)
import Glibc
#endif

/// What a cart change costs the server in CPU, against a `ping` sent the same way (one at a time, waiting
/// for the answer), on a private `:memory:` database (so no sync is counted): the ratio does not depend on
/// how busy the machine is, as a time would.
extension StorefrontBench {
    /// The ViewModels open beside the cart whose line changes.
    struct CPUScene {
        /// The row's name.
        var name: String
        /// Open ViewModels besides the measured cart: `(type, args)`.
        var others: [(type: String, args: JSONValue)]
        /// Lines in the cart.
        var lines: Int
    }

    /// The scenes: the (catalog, dashboard, a product detail and a second cart beside the cart, a
    /// 20-line cart), then 1, 10 and 100 open ViewModels of which only the one cart shows the cart (the
    /// others are catalogs, dashboards and product details of products not in it).
    func cpuScenes(detailProduct: String, otherProducts: [String]) -> [CPUScene] {
        func others(_ count: Int) -> [(type: String, args: JSONValue)] {
            (0..<count).map { index in
                switch index % 3 {
                case 0: ("catalog", [:])
                case 1: ("dashboard", [:])
                default: ("productDetail", ["productId": .string(otherProducts[index % otherProducts.count])])
                }
            }
        }
        return [
            CPUScene(
                name: "cpu/6vm",
                others: [("catalog", [:]), ("dashboard", [:]), ("productDetail", ["productId": .string(detailProduct)]), ("cart", [:])],
                lines: 20),
            CPUScene(name: "cpu/1vm", others: [], lines: 20),
            CPUScene(name: "cpu/10vm", others: others(9), lines: 20),
            CPUScene(name: "cpu/100vm", others: others(99), lines: 20),
        ]
    }

    /// Server CPU per `cart/setQuantity` (a line toggled between 1 and 2, always a real change) and per
    /// `ping`, each one at a time until the server has used `cpuTicks` clock ticks on it, in each scene.
    func actionCPU(_ path: String) throws -> [Measurement] {
        var measurements: [Measurement] = []
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let wanted = cpuTicks
        let probe = try domainSession(path, database: ":memory:")
        let products = try productsAllowingTwo(probe, count: 60)
        _ = try probe.child.finish()
        for scene in cpuScenes(detailProduct: products[0], otherProducts: Array(products[30...])) {
            let session = try domainSession(path, database: ":memory:")
            let (cart, _) = try session.open("cart")
            _ = try session.waitUntil(cart) { $0["phase"] == "loaded" }
            for line in products.prefix(scene.lines) {
                _ = try session.call("cart/add", ["viewModel": .string(cart), "productId": .string(line), "quantity": 1])
            }
            for other in scene.others {
                let (handle, _) = try session.open(other.type, other.args)
                _ = try session.waitUntil(handle) { state in
                    state["phase"].map { $0 == "loaded" } ?? true
                }
            }
            // Let every first load finish before counting.
            for _ in 0..<50 { _ = try session.call("ping", [:]) }

            try callgrindDump(session, "setup-\(scene.name)")
            var changes = 0
            var quantities = [Int](repeating: 1, count: scene.lines)
            let changeStart = try session.child.cpuTicks()
            let changeClock = monotonicNanoseconds()
            while true {
                let line = changes % scene.lines
                quantities[line] = 3 - quantities[line]
                let reply = try session.call(
                    "cart/setQuantity",
                    ["viewModel": .string(cart), "productId": .string(products[line]), "quantity": .integer(Int64(quantities[line]))])
                guard !reply.changes.isEmpty else { throw BenchError(description: "a cart/setQuantity changed nothing") }
                changes += 1
                if let counted = Self.callgrindCounts {
                    if changes == counted.changes { break }
                } else if changes % 50 == 0, try session.child.cpuTicks() - changeStart >= wanted {
                    break
                }
            }
            let changeTicks = try session.child.cpuTicks() - changeStart
            let changeWall = Double(monotonicNanoseconds() - changeClock) / Double(changes)

            try callgrindDump(session, "changes-\(changes)-\(scene.name)")
            var pings = 0
            let pingStart = try session.child.cpuTicks()
            while true {
                _ = try session.call("ping", [:])
                pings += 1
                if let counted = Self.callgrindCounts {
                    if pings == counted.pings { break }
                } else if pings % 500 == 0, try session.child.cpuTicks() - pingStart >= wanted {
                    break
                }
            }
            try callgrindDump(session, "pings-\(pings)-\(scene.name)")
            let pingTicks = try session.child.cpuTicks() - pingStart
            let peak = try session.child.finish()

            let changeMicroseconds = Double(changeTicks) / ticksPerSecond * 1e6 / Double(changes)
            let pingMicroseconds = Double(pingTicks) / ticksPerSecond * 1e6 / Double(pings)
            measurements.append(Measurement(
                name: scene.name, framing: .ndjson, runs: 1, count: changes,
                figures: [
                    ("changeCPUUs", changeMicroseconds, "µs CPU/change"), ("pingCPUUs", pingMicroseconds, "µs CPU/ping"),
                    ("ratio", changeMicroseconds / pingMicroseconds, "x"), ("changeRoundTripUs", changeWall / 1e3, "µs"),
                ], peakRSSKiB: peak))
        }
        return measurements
    }

    /// `count` products of which a cart may hold 2 (in stock, at least 2 per order), as their product
    /// detail says.
    func productsAllowingTwo(_ session: BenchSession, count: Int) throws -> [String] {
        var chosen: [String] = []
        for product in try inStockProducts(session, count: min(200, count * 3)) where chosen.count < count {
            let (detail, _) = try session.open("productDetail", ["productId": .string(product)])
            _ = try session.waitUntil(detail) { $0["phase"] == "loaded" }
            if (session.mirrors[detail]?["maxQuantity"]?.integerValue ?? 0) >= 2 { chosen.append(product) }
            _ = try session.call("viewModel/close", ["viewModel": .string(detail)])
        }
        guard chosen.count == count else { throw BenchError(description: "only \(chosen.count) products allow 2 in a cart") }
        return chosen
    }

    /// Under `STOREFRONT_BENCH_CALLGRIND=1` (the server run by `valgrind --tool=callgrind`, through a
    /// `--server` wrapper): fixed counts of changes and pings, each phase dumped to its own profile.
    static let callgrindCounts: (changes: Int, pings: Int)? =
        getenv("STOREFRONT_BENCH_CALLGRIND").map { _ in (changes: 200, pings: 2_000) }

    /// Has callgrind write the server's counts so far to a profile named `label` and reset them, when
    /// measuring under callgrind.
    func callgrindDump(_ session: BenchSession, _ label: String) throws {
        guard Self.callgrindCounts != nil else { return }
        // Its report goes to stderr: stdout carries the table.
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO)
        let child = try spawn(["/usr/bin/callgrind_control", "--dump=\(label)", String(session.child.pid)], actions: &actions)
        var exit: Int32 = 0
        while waitpid(child, &exit, 0) < 0 && errno == EINTR {}
        guard exit == 0 else { throw BenchError(description: "callgrind_control ended with status \(exit)") }
    }
}
