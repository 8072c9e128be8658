import Foundation
import JSON

/// The two engines side by side (issue 17): the same measurements on a new SQLite file and on a new
/// database of a PostgreSQL cluster (`--postgres`), alternated in one run so that the machine's load touches
/// both alike. Servers are real `storefront serve` processes over pipes; the cluster is whatever --postgres
/// names (scripts/postgres.sh starts a throwaway one on loopback).
extension StorefrontBench {
    /// The engines to compare: a SQLite file in `folder`, and PostgreSQL when --postgres is given.
    private func engineDatabases(_ label: String, folder: String) throws -> [(engine: String, database: String)] {
        guard let postgres else { throw BenchError(description: "--mode postgres needs --postgres postgres://user@host:port/db") }
        let name = "bench_\(label)_\(UInt64(monotonicNanoseconds()) % 1_000_000_000)"
        _ = try BenchPsql.run(url: postgres, sql: "CREATE DATABASE \(name)")
        return [("sqlite", folder + "/\(label).sqlite"), ("postgres", BenchPsql.url(postgres, database: name))]
    }

    /// Every figure of the postgres mode.
    func enginesCompared(_ path: String) throws -> [Measurement] {
        let folder = try TemporaryFolder()
        var measurements: [Measurement] = []
        for (engine, database) in try engineDatabases("propagation", folder: folder.path) {
            var measurement = try crossProcessPropagation(path, database: database)
            measurement.name = "propagate \(engine)"
            measurements.append(measurement)
        }
        for (engine, database) in try engineDatabases("adds", folder: folder.path) {
            measurements.append(try engineAdds(path, database: database, engine: engine))
        }
        for (engine, database) in try engineDatabases("checkouts", folder: folder.path) {
            measurements.append(try concurrentCheckouts(path, database: database, engine: engine))
        }
        return measurements
    }

    /// Durable `cart/add` through one server: 50 one at a time, then 50 pipelined in one write, alternated
    /// for --adds calls in all (after 400 untimed ones).
    func engineAdds(_ path: String, database: String, engine: String) throws -> Measurement {
        let session = try domainSession(path, database: database)
        _ = try session.signUp(email: "adds@example.com")
        let products = try inStockProducts(session, count: 50)
        let (cart, _) = try session.open("cart")
        _ = try session.waitUntil(cart) { $0["phase"] == "loaded" }
        for _ in 0..<8 {
            for product in products { _ = try session.call("cart/add", addParams(cart, product)) }
            _ = try session.call("cart/clear", ["viewModel": .string(cart)])
        }
        var sequential: UInt64 = 0
        var pipelined: UInt64 = 0
        let bursts = max(1, adds / products.count / 2)
        for _ in 0..<bursts {
            for product in products { sequential += try session.call("cart/add", addParams(cart, product)).nanoseconds }
            _ = try session.call("cart/clear", ["viewModel": .string(cart)])
            pipelined += try pipelinedAdds(session, cart: cart, products: products)
            _ = try session.call("cart/clear", ["viewModel": .string(cart)])
        }
        let connections = try connectionCount(database)
        let peak = try session.child.finish()
        let count = Double(bursts * products.count)
        return Measurement(
            name: "cart/add \(engine)", framing: .ndjson, runs: 1, count: bursts * products.count * 2,
            figures: [
                ("durableAddsPerSecond", count / (Double(sequential) / 1e9), "/s one at a time"),
                ("pipelinedAddsPerSecond", count / (Double(pipelined) / 1e9), "/s pipelined (50 per write)"),
                ("connections", Double(connections ?? 0), connections == nil ? "(a file: none)" : "to the database, this server"),
            ], peakRSSKiB: peak)
    }

    /// --checkout-servers servers, each signed up to an account of its own, check out at once: each round
    /// writes to every server 10 add/checkout pairs of one product (all servers buy the same 10 products,
    /// so their checkouts contend for the same rows), then reads every answer. Checkouts per second over all
    /// servers, with the peak RSS of one server and its connections to the database.
    func concurrentCheckouts(_ path: String, database: String, engine: String) throws -> Measurement {
        var sessions: [BenchSession] = []
        var carts: [String] = []
        for index in 0..<checkoutServers {
            let session = try domainSession(path, database: database)
            _ = try session.signUp(email: "checkout\(index)@example.com")
            let (cart, _) = try session.open("cart")
            _ = try session.waitUntil(cart) { $0["phase"] == "loaded" }
            sessions.append(session)
            carts.append(cart)
        }
        // Products with stock for every round (raised through no server: the test is of checkouts).
        let products = try inStockProducts(sessions[0], count: 10)
        let rounds = max(1, adds / (10 * checkoutServers))
        try BenchPsql.setStock(database, products: products, stock: 1_000_000)
        var nextID: Int64 = 5_000_000_000
        var placed = 0
        let start = monotonicNanoseconds()
        for _ in 0..<rounds {
            var expected: [Int] = []
            for (session, cart) in zip(sessions, carts) {
                var bytes: [UInt8] = []
                for product in products {
                    let add: JSONValue = ["jsonrpc": "2.0", "id": .integer(nextID), "method": "cart/add", "params": addParams(cart, product)]
                    let checkout: JSONValue = [
                        "jsonrpc": "2.0", "id": .integer(nextID + 1), "method": "cart/checkout", "params": ["viewModel": .string(cart)],
                    ]
                    nextID += 2
                    session.child.framing.frame(add.serializedString(), into: &bytes)
                    session.child.framing.frame(checkout.serializedString(), into: &bytes)
                }
                try session.child.write(bytes)
                expected.append(2 * products.count)
            }
            for (session, count) in zip(sessions, expected) {
                var answered = 0
                while answered < count {
                    let message = try JSONValue(parsing: Array(try session.child.readMessage()))
                    if message["method"] != nil { continue }
                    guard message["error"] == nil else { throw BenchError(description: "a concurrent cart/add or cart/checkout failed: \(message)") }
                    if message["result"]?["orderId"]?.stringValue != nil { placed += 1 }
                    answered += 1
                }
            }
        }
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let connections = try connectionCount(database)
        var peak = 0
        for session in sessions { peak = max(peak, try session.child.finish()) }
        return Measurement(
            name: "checkout \(engine)", framing: .ndjson, runs: 1, count: placed,
            figures: [
                ("checkoutsPerSecond", Double(placed) / seconds, "/s, \(checkoutServers) servers at once"),
                ("connectionsPerServer", Double(connections ?? 0) / Double(checkoutServers), connections == nil ? "(a file: none)" : "to the database"),
            ], peakRSSKiB: peak)
    }

    /// The connections to `database` now, when it is a PostgreSQL one (nil for a file).
    private func connectionCount(_ database: String) throws -> Int? {
        guard database.hasPrefix("postgres") else { return nil }
        let name = URLComponents(string: database)?.path.dropFirst() ?? ""
        let rows = try BenchPsql.run(url: database, sql: "SELECT COUNT(*) - 1 FROM pg_stat_activity WHERE datname = '\(name)'")
        return rows.first.flatMap { Int($0) }
    }
}

/// `psql`, for what the bench does to a database outside the servers.
enum BenchPsql {
    /// `url` naming the database `name`.
    static func url(_ url: String, database name: String) -> String {
        var components = URLComponents(string: url)!
        components.path = "/" + name
        return components.string!
    }

    /// Sets the stock (and the per-order maximum) of `products` in a database of either engine.
    static func setStock(_ database: String, products: [String], stock: Int) throws {
        let list = products.map { "'\($0)'" }.joined(separator: ",")
        let sql = "UPDATE product SET stock = \(stock), maxPerOrder = 1000 WHERE id IN (\(list))"
        if database.hasPrefix("postgres") {
            _ = try run(url: database, sql: sql)
        } else {
            _ = try output(["sqlite3", database, sql])
        }
    }

    /// The first column of each row of `sql`.
    static func run(url: String, sql: String) throws -> [String] {
        try output(["psql", url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .split(separator: "\n").map { String($0.split(separator: "|").first ?? "") }
    }

    private static func output(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError(description: "\(arguments[0]) failed: \(arguments.dropFirst(2))") }
        return String(decoding: data, as: UTF8.self)
    }
}
