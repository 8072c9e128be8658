import JSON

/// Reliability under load: nothing lost, no error, memory back where it was.
extension StorefrontBench {
    /// `loadPings` pipelined pings, then `inFlight` actions written at once (cart changes that cancel
    /// out and catalog selections that toggle back), twice; the server's resident memory before and after
    /// each. Every request must be answered exactly once, with a result (``ServerChild/pipeline(_:ids:)``
    /// throws otherwise), so a printed row means zero errors and zero lost responses.
    func load(_ path: String, database: String) throws -> [Measurement] {
        let session = try domainSession(path, database: database)
        let child = session.child
        let products = try inStockProducts(session, count: 50)
        let (cart, _) = try session.open("cart")
        let (catalog, _) = try session.open("catalog")
        _ = try session.waitUntil(cart) { $0["phase"] == "loaded" }
        _ = try session.waitUntil(catalog) { $0["phase"] == "loaded" }
        guard let listed = session.mirrors[catalog]?["products"]?.arrayValue?.first?["id"]?.stringValue else {
            throw BenchError(description: "the catalog shows no product")
        }
        var resident = [try child.memoryKiB("VmRSS")]

        let pingIDs: Range<Int64> = 1_000_000..<Int64(1_000_000 + loadPings)
        var start = monotonicNanoseconds()
        try child.pipeline(Self.pings(pingIDs, .ndjson), ids: pingIDs)
        let pingRate = Double(loadPings) / (Double(monotonicNanoseconds() - start) / 1e9)
        resident.append(try child.memoryKiB("VmRSS"))

        var actionSeconds: [Double] = []
        var notifications = 0
        for round in 0..<2 {
            let first = Int64(100_000_000 * (round + 1))
            var bytes: [UInt8] = []
            for index in 0..<inFlight {
                let product = products[(index / 4) % products.count]
                let (method, params): (String, JSONValue) = switch index % 4 {
                case 0: ("cart/add", ["viewModel": .string(cart), "productId": .string(product), "quantity": 1])
                case 1: ("cart/setQuantity", ["viewModel": .string(cart), "productId": .string(product), "quantity": 0])
                default: ("catalog/toggleSelection", ["viewModel": .string(catalog), "productId": .string(listed)])
                }
                let message: JSONValue = ["jsonrpc": "2.0", "id": .integer(first + Int64(index)), "method": .string(method), "params": params]
                WireFraming.ndjson.frame(message.serializedString(), into: &bytes)
            }
            start = monotonicNanoseconds()
            notifications += try child.pipeline(bytes, ids: first..<(first + Int64(inFlight)))
            actionSeconds.append(Double(monotonicNanoseconds() - start) / 1e9)
            resident.append(try child.memoryKiB("VmRSS"))
        }
        let peak = try child.memoryKiB("VmHWM")
        _ = try child.finish()
        let mebibytes = resident.map { Double($0) / 1024 }
        return [
            Measurement(
                name: "load", framing: .ndjson, runs: 1, count: loadPings,
                figures: [("pingsPerSecond", pingRate, "msg/s"), ("rssBeforeMiB", mebibytes[0], "MiB"), ("rssAfterMiB", mebibytes[1], "MiB")],
                peakRSSKiB: peak),
            Measurement(
                name: "in-flight", framing: .ndjson, runs: 2, count: inFlight,
                figures: [
                    ("secondsPerRound", median(actionSeconds), "s"), ("notifications", Double(notifications), ""),
                    ("rssAfterRound1MiB", mebibytes[2], "MiB"), ("rssAfterRound2MiB", mebibytes[3], "MiB"),
                ],
                peakRSSKiB: peak),
        ]
    }
}
