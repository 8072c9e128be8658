import ArgumentParser
import GRDB
import ShopStore

#if canImport(Glibc)
import Glibc
#endif

/// `storefront-bench`: measures `storefront serve` over real pipes and prints a table.
@main
struct StorefrontBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storefront-bench",
        abstract: "Measure storefront serve over real pipes and print a table.",
        discussion: """
            Protocol figures (each framing): start-up to the initialize answer, sequential ping latency, pipelined \
            throughput, and peak memory under a flood of pipelined requests. Shop figures (on a catalog seeded with \
            --products, created on first use): first catalog page, search after its debounce, durable cart/add rate, \
            the patch of a one-line change in a 100-line cart, and memory with every ViewModel open. Several servers \
            on one file (propagation, on new files of the demo catalog): how soon a change made through one shows in \
            another, what the change log costs a durable write, pipelined writes through two servers against one, and \
            the CPU an idle server spends following the log. Analytics: what `record` costs its caller, and actions per \
            second with and without recording. Every answer is checked; nothing is asserted about speed.
            """
    )

    /// What to measure.
    enum Mode: String, CaseIterable {
        case startup, latency, throughput, flood, open, search, cart, patch, memory, cpu, propagation, load, signin, analytics, ticker, postgres

        /// Whether the measurement is of the protocol (run in each framing) rather than of the shop.
        var isProtocol: Bool { [.startup, .latency, .throughput, .flood, .load].contains(self) }

        /// Whether the measurement runs on the large catalog (`--products`).
        var usesCatalog: Bool { !isProtocol && ![.propagation, .cpu, .signin, .analytics, .ticker, .postgres].contains(self) }

        /// What runs when no --mode is given: everything but the long reliability load, the ticker flood and
        /// the engines compared (which needs --postgres).
        static let standard = allCases.filter { $0 != .load && $0 != .ticker && $0 != .postgres }
    }

    @Option(help: "The storefront executable (default: storefront next to this executable).")
    var server: String?

    @Option(name: .short, help: "Pings measured per run (latency, throughput).")
    var n = 10_000

    @Option(help: "Pings sent before measuring, per run.")
    var warmup = 1_000

    @Option(help: "Runs per measurement, each with a new server (for startup: the number of spawns).")
    var runs = 10

    @Option(help: "Pipelined pings of the flood measurement (peak memory under load).")
    var flood = 200_000

    @Option(help: "Runs of each shop measurement, each with a new server.")
    var domainRuns = 3

    @Option(help: "cart/add calls per shop run (half one at a time, half pipelined).")
    var adds = 1_000

    @Option(help: "Products in the large catalog of the shop measurements.")
    var products = 100_000

    @Option(help: "The large catalog's database; seeded with --products when it does not exist (default: in /tmp).")
    var catalog: String?

    @Option(help: "What to measure, comma-separated: \(Mode.allCases.map(\.rawValue).joined(separator: ", ")).")
    var mode = Mode.standard.map(\.rawValue).joined(separator: ",")

    @Option(help: "cart/add calls timed from one server to another's notification (propagation).")
    var propagationSamples = 300

    @Option(help: "Seconds the idle servers are watched (propagation).")
    var idleSeconds = 10

    @Option(help: "Pipelined pings of the load measurement.")
    var loadPings = 1_000_000

    @Option(help: "Actions written at once (each round) in the load measurement.")
    var inFlight = 10_000

    @Option(help: "Server CPU clock ticks spent on each half of a cpu measurement (cart changes, then pings).")
    var cpuTicks = 100

    @Option(help: "record calls timed in the analytics measurement (in bursts of 100 a millisecond).")
    var analyticsEvents = 100_000

    @Option(help: "Changes per second of the ticker measurement's market simulation.")
    var tickerRate = 1_000

    @Option(help: "Seconds each ticker reader reads for.")
    var tickerSeconds = 20.0

    @Option(help: "Seconds the slow ticker reader leaves the output unread between reads.")
    var slowReadSeconds = 5.0

    @Option(help: "A PostgreSQL cluster (postgres://user@host:port/db) for --mode postgres: each measurement gets a new database on it (made with psql), beside a new SQLite file.")
    var postgres: String?

    @Option(help: "Server processes checking out at once (postgres mode).")
    var checkoutServers = 8

    @Option(help: "Framings to measure, comma-separated: ndjson, lsp.")
    var framing = "ndjson,lsp"

    @Flag(help: "Print one JSON line per measurement instead of a table.")
    var json = false

    @Flag(help: "Also print details (the measured patch).")
    var verbose = false

    /// The large catalog's database.
    var catalogPath: String { catalog ?? "/tmp/storefront-bench-catalog-\(products).sqlite" }

    func validate() throws {
        guard n > 0, warmup >= 0, runs > 0, flood > 0, domainRuns > 0, adds >= 100, products > 0, loadPings > 0, inFlight > 0,
              propagationSamples > 0, idleSeconds > 0
        else {
            throw ValidationError(
                "-n, --runs, --flood, --domain-runs, --products, --propagation-samples and --idle-seconds must be positive, --adds at least 100, --warmup not negative")
        }
        _ = try modes()
        _ = try framings()
    }

    func run() throws {
        // The floors' connections (GRDB, in this process) run with the server's SQLite process settings.
        SQLiteProcessSettings.applyOnce()
        let path = server ?? Self.siblingPath("storefront")
        guard access(path, X_OK) == 0 else {
            throw ValidationError("no executable at \(path): build it (swift build -c release --product storefront) or pass --server")
        }
        let selected = try modes()
        let folder = try TemporaryFolder()
        let database = folder.path + "/protocol.sqlite"
        if selected.contains(where: \.isProtocol) {
            // The first start creates and seeds the database; measured starts open it, as an editor's do.
            _ = try ServerChild(path: path, framing: .ndjson, arguments: ["--database", database]).finish()
        }
        if selected.contains(where: \.usesCatalog) { try prepareCatalog(path) }
        if !json {
            print("storefront-bench: \(path); n \(n), warmup \(warmup), runs \(runs); shop: \(products) products, runs \(domainRuns)")
            print(Measurement.tableHeader)
        }
        for mode in selected {
            let measurements: [Measurement] = switch mode {
            case .startup: try framings().map { try startup(path, $0, database: database) }
            case .latency: try framings().map { try latency(path, $0, database: database) }
            case .throughput: try framings().map { try throughput(path, $0, database: database, count: n, runs: runs) }
            case .flood: try framings().map { try throughput(path, $0, database: database, count: flood, runs: 1, name: "flood") }
            case .open: try catalogOpening(path, catalog: catalogPath)
            case .search: try searching(path, catalog: catalogPath)
            case .cart: try cartAdding(path, catalog: catalogPath)
            case .patch: try patchSize(path, catalog: catalogPath)
            case .memory: try memory(path, catalog: catalogPath)
            case .cpu: try actionCPU(path)
            case .propagation: try propagation(path)
            case .load: try load(path, database: database)
            case .signin: try signingIn(path)
            case .analytics: try analytics(path)
            case .ticker: try ticker(path)
            case .postgres: try enginesCompared(path)
            }
            for measurement in measurements { print(json ? measurement.jsonLine : measurement.tableRow) }
        }
    }

    /// Seeds the large catalog unless it exists; an existing one gets the migrations of the server under test
    /// first (a server started on it without input), so that what is measured on copies of it (the durable
    /// write's floor among them, which is not a server) runs on that server's schema, and no run counts them.
    private func prepareCatalog(_ path: String) throws {
        guard access(catalogPath, F_OK) != 0 else {
            try runToCompletion([path, "serve", "--database", catalogPath], withoutInput: true)
            // Into the file itself: the copies are of the file alone.
            try DatabaseQueue(path: catalogPath).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            return
        }
        let start = monotonicNanoseconds()
        try runToCompletion([path, "seed", "--products", String(products), "--database", catalogPath])
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        printToStandardError("storefront-bench: seeded \(products) products into \(catalogPath) in \((seconds * 10).rounded() / 10) s\n")
    }

    // MARK: Measurements

    /// Spawn to the `initialize` answer, `runs` times.
    func startup(_ path: String, _ framing: WireFraming, database: String) throws -> Measurement {
        var milliseconds: [Double] = []
        var peak = 0
        for _ in 0..<runs {
            let start = monotonicNanoseconds()
            let child = try ServerChild(path: path, framing: framing, arguments: ["--database", database])
            try initialize(child)
            milliseconds.append(Double(monotonicNanoseconds() - start) / 1e6)
            peak = max(peak, try child.finish())
        }
        return Measurement(
            name: "startup", framing: framing, runs: runs, count: 1,
            figures: [("medianMs", median(milliseconds), "ms"), ("minMs", milliseconds.min()!, "ms")], peakRSSKiB: peak)
    }

    /// One ping at a time: write it, wait for its answer.
    func latency(_ path: String, _ framing: WireFraming, database: String) throws -> Measurement {
        var samples: [Double] = []
        var rates: [Double] = []
        var peak = 0
        for _ in 0..<runs {
            let child = try ServerChild(path: path, framing: framing, arguments: ["--database", database])
            try initialize(child)
            let frames = (1...Int64(warmup + n)).map { id in
                var bytes: [UInt8] = []
                framing.frame(Self.ping(id), into: &bytes)
                return bytes
            }
            var measuredStart: UInt64 = 0
            for (index, frame) in frames.enumerated() {
                if index == warmup { measuredStart = monotonicNanoseconds() }
                let start = monotonicNanoseconds()
                try child.write(frame)
                let id = try child.readAnswer()
                let end = monotonicNanoseconds()
                guard id == index + 1 else { throw BenchError(description: "expected the answer to id \(index + 1), got \(id)") }
                if index >= warmup { samples.append(Double(end - start) / 1e3) }
            }
            rates.append(Double(n) / (Double(monotonicNanoseconds() - measuredStart) / 1e9))
            peak = max(peak, try child.finish())
        }
        samples.sort()
        return Measurement(
            name: "latency", framing: framing, runs: runs, count: n,
            figures: [
                ("roundTripsPerSecond", median(rates), "rt/s"), ("p50Us", percentile(50, of: samples), "µs"),
                ("p90Us", percentile(90, of: samples), "µs"), ("p99Us", percentile(99, of: samples), "µs"),
            ], peakRSSKiB: peak)
    }

    /// `count` pings written as fast as the pipe takes them, answers read in the same loop, `runs` times.
    func throughput(
        _ path: String, _ framing: WireFraming, database: String, count: Int, runs: Int, name: String = "throughput"
    ) throws -> Measurement {
        var rates: [Double] = []
        var peak = 0
        for _ in 0..<runs {
            let child = try ServerChild(path: path, framing: framing, arguments: ["--database", database])
            try initialize(child)
            if warmup > 0 {
                try child.pipeline(Self.pings(1..<Int64(warmup + 1), framing), ids: 1..<Int64(warmup + 1))
            }
            let ids = Int64(warmup + 1)..<Int64(warmup + count + 1)
            let bytes = Self.pings(ids, framing)
            let start = monotonicNanoseconds()
            try child.pipeline(bytes, ids: ids)
            rates.append(Double(count) / (Double(monotonicNanoseconds() - start) / 1e9))
            peak = max(peak, try child.finish())
        }
        return Measurement(
            name: name, framing: framing, runs: runs, count: count,
            figures: [("messagesPerSecond", median(rates), "msg/s"), ("minMessagesPerSecond", rates.min()!, "msg/s")],
            peakRSSKiB: peak)
    }

    // MARK: Helpers

    private func initialize(_ child: ServerChild) throws {
        var bytes: [UInt8] = []
        child.framing.frame(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"storefront-bench"}}}"#, into: &bytes)
        try child.write(bytes)
        let id = try child.readAnswer()
        guard id == 0 else { throw BenchError(description: "expected the initialize answer, got id \(id)") }
    }

    private static func ping(_ id: Int64) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"ping"}"#
    }

    static func pings(_ ids: Range<Int64>, _ framing: WireFraming) -> [UInt8] {
        var bytes: [UInt8] = []
        for id in ids { framing.frame(ping(id), into: &bytes) }
        return bytes
    }

    private func modes() throws -> [Mode] {
        try mode.split(separator: ",").map { name in
            guard let mode = Mode(rawValue: name.trimmingCharacters()) else { throw ValidationError("unknown mode \(name)") }
            return mode
        }
    }

    private func framings() throws -> [WireFraming] {
        try framing.split(separator: ",").map { name in
            guard let framing = WireFraming(rawValue: name.trimmingCharacters()) else { throw ValidationError("unknown framing \(name)") }
            return framing
        }
    }

    /// `name` in the directory of this executable.
    private static func siblingPath(_ name: String) -> String {
        var link = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &link, link.count - 1)
        guard length > 0 else { return name }
        let path = String(decoding: link[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) + "/" + name
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
