import JSON

#if canImport(Glibc)
import Glibc
#endif

/// The shop's figures on a large catalog: what a user waits for, what a write costs, what a patch weighs,
/// and what memory the server holds.
extension StorefrontBench {
    /// The search debounce of the catalog (`CatalogViewModel.searchDebounce`), subtracted from the time
    /// a `catalog/search` takes to answer.
    static let searchDebounceNanoseconds: UInt64 = 300_000_000

    /// What a user types, letter by letter and word by word: one-letter prefixes (tens of thousands of
    /// matches), two-letter ones, whole words, two words, and text nothing matches.
    static let searchQueries = [
        "a", "b", "s", "e", "st", "ch", "la", "oak", "lamp", "wool", "kettle", "desk", "oak sh", "smart linen", "zzzz",
    ]

    /// `viewModel/open catalog` until the mirror shows the first page (`phase` loaded): the first open in a
    /// fresh server (cold caches), then 50 re-opens (each closed after), in each of `domainRuns` servers.
    func catalogOpening(_ path: String, catalog: String) throws -> [Measurement] {
        var cold: [Double] = []
        var warm: [Double] = []
        var peak = 0
        for _ in 0..<domainRuns {
            let session = try domainSession(path, database: catalog)
            for attempt in 0...50 {
                let start = monotonicNanoseconds()
                let (handle, _) = try session.open("catalog")
                let shown = try session.waitUntil(handle) { $0["phase"] == "loaded" }
                let milliseconds = Double(shown - start) / 1e6
                if attempt == 0 {
                    cold.append(milliseconds)
                    try expectCatalogSize(session.mirrors[handle]!)
                } else {
                    warm.append(milliseconds)
                }
                _ = try session.call("viewModel/close", ["viewModel": .string(handle)])
            }
            peak = max(peak, try session.child.finish())
        }
        warm.sort()
        return [
            Measurement(
                name: "open", framing: .ndjson, runs: domainRuns, count: 1,
                figures: [("firstPageColdMs", median(cold), "ms"), ("maxColdMs", cold.max()!, "ms")], peakRSSKiB: peak),
            Measurement(
                name: "reopen", framing: .ndjson, runs: domainRuns, count: warm.count,
                figures: [("firstPageP50Ms", percentile(50, of: warm), "ms"), ("p99Ms", percentile(99, of: warm), "ms")],
                peakRSSKiB: peak),
        ]
    }

    /// `catalog/search` for each of ``searchQueries`` in turn, in each of `domainRuns` servers: how long after the debounce
    /// the answer (which comes after the new page is in the state) arrives.
    func searching(_ path: String, catalog: String) throws -> [Measurement] {
        var samples: [Double] = []
        var worst: (milliseconds: Double, query: String) = (0, "")
        var perQuery: [String: [Double]] = [:]
        var peak = 0
        for _ in 0..<domainRuns {
            let session = try domainSession(path, database: catalog)
            let (handle, _) = try session.open("catalog")
            _ = try session.waitUntil(handle) { $0["phase"] == "loaded" }
            try expectCatalogSize(session.mirrors[handle]!)
            for query in Self.searchQueries {
                let reply = try session.call("catalog/search", ["viewModel": .string(handle), "query": .string(query)])
                let after = Double(Int64(reply.nanoseconds) - Int64(Self.searchDebounceNanoseconds)) / 1e6
                samples.append(after)
                perQuery[query, default: []].append(after)
                if after > worst.milliseconds { worst = (after, query) }
                guard session.mirrors[handle]?["query"] == .string(query) else {
                    throw BenchError(description: "catalog/search \(query) answered before its state")
                }
            }
            peak = max(peak, try session.child.finish())
        }
        samples.sort()
        if verbose {
            let medians = Self.searchQueries.map { "\($0): \((median(perQuery[$0] ?? [0]) * 100).rounded() / 100) ms" }
            printToStandardError("search medians after the debounce: \(medians.joined(separator: ", "))\n")
        }
        return [Measurement(
            name: "search", framing: .ndjson, runs: domainRuns, count: Self.searchQueries.count,
            figures: [
                ("afterDebounceP50Ms", percentile(50, of: samples), "ms"), ("p90Ms", percentile(90, of: samples), "ms"),
                ("maxMs", worst.milliseconds, "ms \"\(worst.query)\""),
            ], peakRSSKiB: peak)]
    }

    /// `cart/add` on a copy of the catalog with the cart open, each acknowledged after its transaction
    /// committed (SQLite WAL, `synchronous=FULL`: the commit is on disk): one at a time, then pipelined
    /// in bursts of 50. Each burst adds one unit of 50 different products, then the cart is cleared
    /// (not timed), so no line reaches its product's limit. Then checkouts (the session is signed in, so
    /// each also notifies the account): one at a time, written with their adds, in rounds of 50 pairs, and
    /// one at a time again once the account's inbox is full (a checkout's cost must not grow with it).
    ///
    /// The floor, in the same rotation: the raw durable transaction (``CartWriteFloor/rawUpsert(_:)``:
    /// `BEGIN IMMEDIATE`, upsert, `COMMIT`, same pragmas) on a second copy of the catalog on the same disk,
    /// one at a time, in blocks of 50 alternating with the server's, after 400 untimed writes to each file
    /// (a growing write-ahead log syncs slower than one that is reused).
    func cartAdding(_ path: String, catalog: String) throws -> [Measurement] {
        var sequential: [Double] = []
        var pipelined: [Double] = []
        var floors: [Double] = []
        var checkouts: [Double] = []
        var pipelinedCheckouts: [Double] = []
        var checkoutRounds: [Double] = []
        var fullInboxCheckouts: [Double] = []
        var peak = 0
        for _ in 0..<domainRuns {
            let copy = try TemporaryDatabase(copying: catalog)
            defer { withExtendedLifetime(copy) {} }  // Removed only after the server is done with it.
            let floorCopy = try TemporaryDatabase(copying: catalog)
            let session = try domainSession(path, database: copy.path)
            // Signed in: a guest cannot check out.
            _ = try session.signUp(email: "cart@example.com")
            let products = try inStockProducts(session, count: 50)
            let (cart, _) = try session.open("cart")
            _ = try session.waitUntil(cart) { $0["phase"] == "loaded" }
            let floor = try CartWriteFloor(path: floorCopy.path)
            for round in 0..<8 {
                for product in products {
                    _ = try session.call("cart/add", addParams(cart, product))
                    _ = try floor.rawUpsert(product)
                }
                _ = try session.call("cart/clear", ["viewModel": .string(cart)])
                if round % 2 == 1 { try floor.clear() }
            }
            let bursts = max(1, adds / products.count / 2)
            var sequentialNanoseconds: UInt64 = 0
            var pipelinedNanoseconds: UInt64 = 0
            var floorNanoseconds: UInt64 = 0
            for burst in 0..<(2 * bursts) {
                if burst % 2 == 0 {
                    for product in products {
                        let reply = try session.call("cart/add", addParams(cart, product))
                        sequentialNanoseconds += reply.nanoseconds
                    }
                    for product in products { floorNanoseconds += try floor.rawUpsert(product) }
                    try floor.clear()
                } else {
                    pipelinedNanoseconds += try pipelinedAdds(session, cart: cart, products: products)
                }
                _ = try session.call("cart/clear", ["viewModel": .string(cart)])
            }
            let perHalf = Double(bursts * products.count)
            sequential.append(perHalf / (Double(sequentialNanoseconds) / 1e9))
            pipelined.append(perHalf / (Double(pipelinedNanoseconds) / 1e9))
            floors.append(perHalf / (Double(floorNanoseconds) / 1e9))
            checkouts.append(try sequentialCheckouts(session, cart: cart, products: products))
            pipelinedCheckouts.append(try pipelinedAddCheckoutPairs(session, cart: cart, products: products))
            checkoutRounds.append(try pipelinedCheckoutRounds(session, cart: cart, products: products))
            fullInboxCheckouts.append(try fullInboxCheckoutRate(session, cart: cart))
            peak = max(peak, try session.child.finish())
            withExtendedLifetime(floorCopy) {}
        }
        return [Measurement(
            name: "cart/add", framing: .ndjson, runs: domainRuns, count: max(1, adds / 100) * 50,
            figures: [
                ("durableAddsPerSecond", median(sequential), "/s one at a time"),
                ("rawFloorPerSecond", median(floors), "/s raw durable transaction"),
                ("ratio", median(zip(sequential, floors).map { $0 / $1 }), "x"),
                ("pipelinedAddsPerSecond", median(pipelined), "/s pipelined"),
                ("checkoutsPerSecond", median(checkouts), "/s one at a time"),
                ("addAndCheckoutPerSecond", median(pipelinedCheckouts), "/s, each checkout written with its add"),
                ("pipelinedCheckoutsPerSecond", median(checkoutRounds), "/s, 50 add/checkout pairs in one write"),
                ("fullInboxCheckoutsPerSecond", median(fullInboxCheckouts), "/s one at a time, the account's inbox full"),
            ], peakRSSKiB: peak)]
    }

    /// Checkouts one at a time (as ``sequentialCheckouts(_:cart:products:)``) once the account's inbox holds
    /// its 500 notifications (each checkout notifies the account): 400 more checkouts first, untimed, in
    /// rounds of 50 pairs written at once. Each checkout here buys a product of its own, not yet bought.
    private func fullInboxCheckoutRate(_ session: BenchSession, cart: String) throws -> Double {
        let fresh = Array(try inStockProducts(session, count: 500).dropFirst(50))
        for round in 0..<8 {
            _ = try pipelinedCheckoutRounds(session, cart: cart, products: Array(fresh[(round * 50)..<(round * 50 + 50)]))
        }
        return try sequentialCheckouts(session, cart: cart, products: Array(fresh[400...]))
    }

    /// 50 checkouts of a one-line cart, each after an untimed `cart/add`, one at a time; checkouts per
    /// second.
    private func sequentialCheckouts(_ session: BenchSession, cart: String, products: [String]) throws -> Double {
        var nanoseconds: UInt64 = 0
        for product in products {
            _ = try session.call("cart/add", addParams(cart, product))
            let reply = try session.call("cart/checkout", ["viewModel": .string(cart)])
            guard reply.result["orderId"]?.stringValue != nil else { throw BenchError(description: "a cart/checkout placed no order: \(reply.result)") }
            nanoseconds += reply.nanoseconds
        }
        return Double(products.count) / (Double(nanoseconds) / 1e9)
    }

    /// A 100-line cart, then one line's quantity changed: the size of the patch that carries it.
    func patchSize(_ path: String, catalog: String) throws -> [Measurement] {
        let copy = try TemporaryDatabase(copying: catalog)
        defer { withExtendedLifetime(copy) {} }  // Removed only after the server is done with it.
        let session = try domainSession(path, database: copy.path)
        let products = try inStockProducts(session, count: 100)
        let (cart, _) = try session.open("cart")
        _ = try session.waitUntil(cart) { $0["phase"] == "loaded" }
        for product in products { _ = try session.call("cart/add", addParams(cart, product)) }
        guard session.mirrors[cart]?["lines"]?.arrayValue?.count == 100 else {
            throw BenchError(description: "expected a 100-line cart, the mirror has \(session.mirrors[cart]?["lines"]?.arrayValue?.count ?? 0)")
        }
        // The middle line, to 2 (or the next line whose product allows 2).
        for product in products[50...] {
            guard let reply = try? session.call(
                "cart/setQuantity", ["viewModel": .string(cart), "productId": .string(product), "quantity": 2])
            else { continue }
            guard let change = reply.changes.last, reply.changes.count == 1, let patch = change.message["patch"] else {
                throw BenchError(description: "expected one patch for the change, got \(reply.changes.count)")
            }
            let figures: [(String, Double, String)] = [
                ("patchBytes", Double(patch.serialized().count), "B"),
                ("notificationBytes", Double(change.bodyBytes), "B"),
                ("operations", Double(patch.arrayValue?.count ?? 0), ""),
                ("wholeStateBytes", Double(session.mirrors[cart]!.serialized().count), "B"),
            ]
            if verbose { print("patch: \(patch)") }
            return [Measurement(
                name: "patch", framing: .ndjson, runs: 1, count: 100, figures: figures, peakRSSKiB: try session.child.finish())]
        }
        throw BenchError(description: "no line of the cart allows a quantity of 2")
    }

    /// Every ViewModel type open on the big catalog (the catalog scrolled to 200 products and searched),
    /// then the server's resident memory.
    func memory(_ path: String, catalog: String) throws -> [Measurement] {
        let copy = try TemporaryDatabase(copying: catalog)
        defer { withExtendedLifetime(copy) {} }  // Removed only after the server is done with it.
        let session = try domainSession(path, database: copy.path)
        // Signed in, so that the checkout is placed (a guest's is refused) and the dashboard has recent orders.
        _ = try session.signUp(email: "memory@example.com")
        let product = try inStockProducts(session, count: 1)[0]
        let (catalogHandle, _) = try session.open("catalog")
        _ = try session.waitUntil(catalogHandle) { $0["phase"] == "loaded" }
        for _ in 0..<9 { _ = try session.call("catalog/loadMore", ["viewModel": .string(catalogHandle)]) }
        let (detail, _) = try session.open("productDetail", ["productId": .string(product)])
        let (_, _) = try session.open("productForm")
        let (cart, _) = try session.open("cart")
        let (dashboard, _) = try session.open("dashboard")
        _ = try session.waitUntil(detail) { $0["phase"] == "loaded" }
        _ = try session.waitUntil(cart) { $0["phase"] == "loaded" }
        _ = try session.call("productDetail/addToCart", ["viewModel": .string(detail)])
        _ = try session.call("cart/checkout", ["viewModel": .string(cart)])
        _ = try session.call("dashboard/reload", ["viewModel": .string(dashboard)])
        for query in Self.searchQueries { _ = try session.call("catalog/search", ["viewModel": .string(catalogHandle), "query": .string(query)]) }
        let resident = try session.child.memoryKiB("VmRSS")
        let peak = try session.child.memoryKiB("VmHWM")
        _ = try session.child.finish()
        return [Measurement(
            name: "memory", framing: .ndjson, runs: 1, count: 5,
            figures: [("residentMiB", Double(resident) / 1024, "MiB with every ViewModel open"), ("peakMiB", Double(peak) / 1024, "MiB")],
            peakRSSKiB: peak)]
    }

    // MARK: Helpers

    /// A server on `database`, initialised.
    func domainSession(_ path: String, database: String) throws -> BenchSession {
        let session = try BenchSession(ServerChild(path: path, framing: .ndjson, arguments: ["--database", database]))
        try session.initialize()
        return session
    }

    /// `count` ids of products in stock, from the first catalog pages (sorted by name, so spread across
    /// the catalog).
    func inStockProducts(_ session: BenchSession, count: Int) throws -> [String] {
        let (handle, _) = try session.open("catalog")
        _ = try session.waitUntil(handle) { $0["phase"] == "loaded" }
        while true {
            let products = session.mirrors[handle]?["products"]?.arrayValue ?? []
            let ids = products.filter { $0["inStock"] == true }.compactMap { $0["id"]?.stringValue }
            if ids.count >= count {
                _ = try session.call("viewModel/close", ["viewModel": .string(handle)])
                return Array(ids.prefix(count))
            }
            guard session.mirrors[handle]?["hasMore"] == true else { throw BenchError(description: "fewer than \(count) products in stock") }
            _ = try session.call("catalog/loadMore", ["viewModel": .string(handle)])
        }
    }

    func addParams(_ cart: String, _ product: String) -> JSONValue {
        ["viewModel": .string(cart), "productId": .string(product), "quantity": 1]
    }

    /// Writes one `cart/add` per product in one write and reads until every one is answered; returns the
    /// time that took.
    func pipelinedAdds(_ session: BenchSession, cart: String, products: [String]) throws -> UInt64 {
        var bytes: [UInt8] = []
        let firstID: Int64 = 1_000_000_000 + Int64(monotonicNanoseconds() % 1_000_000_000)
        for (offset, product) in products.enumerated() {
            let message: JSONValue = [
                "jsonrpc": "2.0", "id": .integer(firstID + Int64(offset)), "method": "cart/add", "params": addParams(cart, product),
            ]
            session.child.framing.frame(message.serializedString(), into: &bytes)
        }
        let start = monotonicNanoseconds()
        try session.child.write(bytes)
        var answered = 0
        while answered < products.count {
            let body = try session.child.readMessage()
            let message = try JSONValue(parsing: Array(body))
            if message["method"] != nil { continue }
            guard message["error"] == nil, let id = message["id"]?.integerValue, id >= firstID else {
                throw BenchError(description: "a pipelined cart/add failed: \(message)")
            }
            answered += 1
        }
        return monotonicNanoseconds() - start
    }

    /// 50 checkouts of a one-line cart, each written in one write with its `cart/add` (the checkout checks
    /// out the add sent before it), one pair at a time; checkouts per second, the add included in the time.
    private func pipelinedAddCheckoutPairs(_ session: BenchSession, cart: String, products: [String]) throws -> Double {
        let firstID: Int64 = 2_000_000_000 + Int64(monotonicNanoseconds() % 1_000_000_000)
        var nanoseconds: UInt64 = 0
        for (offset, product) in products.enumerated() {
            let addID = firstID + 2 * Int64(offset)
            let add: JSONValue = ["jsonrpc": "2.0", "id": .integer(addID), "method": "cart/add", "params": addParams(cart, product)]
            let checkout: JSONValue = [
                "jsonrpc": "2.0", "id": .integer(addID + 1), "method": "cart/checkout", "params": ["viewModel": .string(cart)],
            ]
            var bytes: [UInt8] = []
            session.child.framing.frame(add.serializedString(), into: &bytes)
            session.child.framing.frame(checkout.serializedString(), into: &bytes)
            let start = monotonicNanoseconds()
            try session.child.write(bytes)
            var answered = 0
            while answered < 2 {
                let body = try session.child.readMessage()
                let message = try JSONValue(parsing: Array(body))
                if message["method"] != nil { continue }
                guard message["error"] == nil, let id = message["id"]?.integerValue, id == addID || id == addID + 1 else {
                    throw BenchError(description: "a cart/add or cart/checkout written together failed: \(message)")
                }
                if id == addID + 1, message["result"]?["orderId"]?.stringValue == nil {
                    throw BenchError(description: "a cart/checkout written with its add placed no order: \(message)")
                }
                answered += 1
            }
            nanoseconds += monotonicNanoseconds() - start
        }
        return Double(products.count) / (Double(nanoseconds) / 1e9)
    }

    /// 50 add/checkout pairs of one-line carts written at once (100 requests in one write); checkouts per
    /// second, the adds included. Checkouts are taken in the order sent, each after the add before it, so
    /// they are not committed together: this removes the client's waits, not the server's.
    private func pipelinedCheckoutRounds(_ session: BenchSession, cart: String, products: [String]) throws -> Double {
        let firstID: Int64 = 3_000_000_000 + Int64(monotonicNanoseconds() % 1_000_000_000)
        var bytes: [UInt8] = []
        for (offset, product) in products.enumerated() {
            let addID = firstID + 2 * Int64(offset)
            let add: JSONValue = ["jsonrpc": "2.0", "id": .integer(addID), "method": "cart/add", "params": addParams(cart, product)]
            let checkout: JSONValue = [
                "jsonrpc": "2.0", "id": .integer(addID + 1), "method": "cart/checkout", "params": ["viewModel": .string(cart)],
            ]
            session.child.framing.frame(add.serializedString(), into: &bytes)
            session.child.framing.frame(checkout.serializedString(), into: &bytes)
        }
        let start = monotonicNanoseconds()
        try session.child.write(bytes)
        var answered = 0
        while answered < 2 * products.count {
            let body = try session.child.readMessage()
            let message = try JSONValue(parsing: Array(body))
            if message["method"] != nil { continue }
            guard message["error"] == nil, let id = message["id"]?.integerValue, id >= firstID else {
                throw BenchError(description: "a cart/add or cart/checkout written at once failed: \(message)")
            }
            if (id - firstID) % 2 == 1, message["result"]?["orderId"]?.stringValue == nil {
                throw BenchError(description: "a cart/checkout written at once placed no order: \(message)")
            }
            answered += 1
        }
        return Double(products.count) / (Double(monotonicNanoseconds() - start) / 1e9)
    }

    /// Checks that the catalog holds the expected number of products (it was seeded with `--products`).
    private func expectCatalogSize(_ state: JSONValue) throws {
        guard let total = state["totalCount"]?.integerValue, total >= Int64(products) else {
            throw BenchError(description: "the catalog has \(state["totalCount"] ?? .null) products, not \(products): delete \(catalogPath) to reseed")
        }
    }
}
