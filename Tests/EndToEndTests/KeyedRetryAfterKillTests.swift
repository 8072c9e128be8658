import Randomness
import JSON
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Keyed cart changes and checkouts, pipelined, with the server SIGKILLed at seeded-random moments and
/// started again on the same file: the client sends again, with the same key, every request whose
/// answer it did not see (also when those resends are in flight at the next kill), until each one is
/// answered. Every keyed request then took effect exactly once: the keys the file records are exactly
/// the requests answered with success, the orders exactly the checkouts answered with an order, and the
/// units added exactly the units in the orders and the cart.
///
/// `STOREFRONT_RETRY_KILLS` sets the number of kills (default 20), `STOREFRONT_SEED` the seed.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct KeyedRetryAfterKillTests {
    /// One keyed request, as the client knows it.
    struct KeyedRequest {
        enum Kind {
            case add(productId: String, quantity: Int)
            case checkout
        }

        let key: String
        let kind: Kind
        var sends = 0
        var outcome: Outcome?

        func call(on cart: String) -> (method: String, params: JSONValue) {
            switch kind {
            case .add(let productId, let quantity):
                ("cart/add", ["viewModel": .string(cart), "productId": .string(productId), "quantity": .integer(Int64(quantity)),
                              "idempotencyKey": .string(key)])
            case .checkout:
                ("cart/checkout", ["viewModel": .string(cart), "idempotencyKey": .string(key)])
            }
        }
    }

    /// How a request was answered at last.
    enum Outcome {
        /// Success: `orderId` for a checkout; `replayed` when the answer came from the stored key.
        case applied(replayed: Bool, orderId: String?)
        /// -32001 with this reason: nothing was stored.
        case refused(String)
    }

    /// Figures for the log.
    struct Tally {
        var kills = 0
        var requests = 0
        var resends = 0
        /// Answers to resends that came from the stored key (stored before a kill, answer never seen).
        var replayedResends = 0
        /// Resends applied for the first time (their first send never reached the store).
        var freshResends = 0
        /// Resends refused (their first send never reached the store either).
        var refusedResends = 0
        var refused = 0
        /// Answers read and then dropped, as if the connection broke before they arrived.
        var droppedAnswers = 0
        var inFlightAtKill = 0
    }

    @Test func aKeyedRequestRetriedAfterKillsTakesEffectExactlyOnce() throws {
        let kills = environmentInteger("STOREFRONT_RETRY_KILLS", default: 20)
        let seed = UInt64(environmentInteger("STOREFRONT_SEED", default: 20_261_123))
        var random = SeededRandom(seed: seed)
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        var requests: [KeyedRequest] = []
        var tally = Tally()
        var initialStock: [String: Int] = [:]
        var pool: [String] = []
        // The account whose cart every life changes: signed up in the first, its token resumed in each restart
        // (a key is scoped to its shopper, so the resends come from the same account).
        var account: SignedInAccount?

        for life in 0...kills {
            let server = try ServerProcess(["--database", path, "--framing", "ndjson"], timeoutSeconds: 60)
            let client = MirroringClient(server)
            try client.initialize()
            if let account { try client.resume(account) } else { account = try client.signUp(email: "retries@example.com") }
            let owner = try #require(account).owner
            let cart = try client.open("cart")
            try client.waitUntil(cart) { $0["phase"] == "loaded" }
            let stored = try StoredShop.read(path: path, owner: owner)
            try #require(StoredShop.cartLines(of: client.mirrors[cart]!.state) == stored.cartLines,
                         "life \(life): the server shows the cart the file holds (seed \(seed))")
            if life == 0 {
                initialStock = stored.stock
                pool = Array(stored.stock.keys.sorted().filter { stored.stock[$0]! >= 30 && stored.maxPerOrder[$0]! >= 5 }.prefix(8))
                try #require(pool.count == 8, "the demo catalog has products with stock")
            }

            // The requests whose answers were not seen go first, in their order, then new ones.
            var batch = requests.indices.filter { requests[$0].outcome == nil }
            tally.resends += batch.count
            if life == kills {
                // The last server is not killed: resend until every request is answered, then exit.
                while !batch.isEmpty {
                    try Self.exchange(batch, requests: &requests, client: client, cart: cart, tally: &tally, seed: seed)
                    batch = requests.indices.filter { requests[$0].outcome == nil }
                }
                server.closeInput()
                #expect(try server.waitForExit() == 0)
                break
            }
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let kind: KeyedRequest.Kind = Int.random(in: 0..<5, using: &random) == 0
                    ? .checkout : .add(productId: pool.randomElement(using: &random)!, quantity: Int.random(in: 1...2, using: &random))
                requests.append(KeyedRequest(key: "life\(life)-\(requests.count)", kind: kind))
                batch.append(requests.count - 1)
                tally.requests += 1
            }

            // Pipelined in one write; some of the answers are read, then the kill.
            let ids = try client.send(batch.map { requests[$0].call(on: cart) })
            for index in batch { requests[index].sends += 1 }
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                // Every answer is read, and some are dropped, as if the connection broke before they came:
                // those requests were handled, and their resends must answer from the stored keys.
                let answers = try ids.map { try client.response(to: $0) }
                for (index, answer) in zip(batch, answers) where Int.random(in: 0..<2, using: &random) == 0 {
                    try Self.take(answer, for: index, requests: &requests, tally: &tally, seed: seed, shown: client.mirrors[cart]?.state)
                }
                tally.droppedAnswers += batch.filter { requests[$0].outcome == nil }.count
            default:
                // A random number of messages (at least one per request will come), then SIGKILL.
                for _ in 0..<Int.random(in: 0...ids.count, using: &random) { try client.receiveOne() }
                for (index, id) in zip(batch, ids) {
                    if let answer = client.takeResponse(id) {
                        try Self.take(answer, for: index, requests: &requests, tally: &tally, seed: seed, shown: client.mirrors[cart]?.state)
                    }
                }
                tally.inFlightAtKill += batch.filter { requests[$0].outcome == nil }.count
            }
            #expect(try server.killAndWait() == 128 + SIGKILL)
            tally.kills += 1
            let afterKill = try StoredShop.read(path: path, owner: owner)
            let problems = afterKill.inconsistencies(initialStock: initialStock)
            try #require(problems.isEmpty, "after kill \(tally.kills) (seed \(seed)): \(problems)")
        }

        // Exactly once: the file records a key for each request answered with success and for no other,
        // holds an order for each checkout answered with one and no other, and every unit added is in an
        // order or the cart, once.
        let stored = try StoredShop.read(path: path, owner: try #require(account).owner)
        #expect(stored.inconsistencies(initialStock: initialStock).isEmpty, "\(stored.inconsistencies(initialStock: initialStock))")
        let applied = requests.filter { if case .applied = $0.outcome { true } else { false } }
        #expect(requests.allSatisfy { $0.outcome != nil })
        #expect(Set(stored.idempotencyKeys.keys) == Set(applied.map(\.key)), """
            keys stored without a success: \(Set(stored.idempotencyKeys.keys).subtracting(applied.map(\.key)).sorted()); \
            successes without a stored key: \(Set(applied.map(\.key)).subtracting(stored.idempotencyKeys.keys).sorted()) (seed \(seed))
            """)
        var orderIds: [String] = []
        var added: [String: Int] = [:]
        for request in applied {
            guard case .applied(_, let orderId) = request.outcome else { continue }
            switch request.kind {
            case .add(let productId, let quantity): added[productId, default: 0] += quantity
            case .checkout: orderIds.append(orderId ?? "none")
            }
        }
        let twice = Dictionary(grouping: orderIds) { $0 }.filter { $0.value.count > 1 }.keys.sorted()
        #expect(twice.isEmpty, "checkouts answered with the same order: \(twice) (seed \(seed))")
        #expect(Set(stored.orders.keys) == Set(orderIds), """
            orders no checkout was answered with: \(Set(stored.orders.keys).subtracting(orderIds).sorted()); \
            orders answered but not stored: \(Set(orderIds).subtracting(stored.orders.keys).sorted()) (seed \(seed))
            """)
        let ordered = stored.orderedUnits
        for product in pool {
            #expect(added[product, default: 0] == ordered[product, default: 0] + stored.cart[product, default: 0], """
                \(product): \(added[product, default: 0]) units added with success, \(ordered[product, default: 0]) ordered + \
                \(stored.cart[product, default: 0]) in the cart (seed \(seed))
                """)
        }
        print("""
            keyed retries (seed \(seed)): \(tally.kills) kills, \(tally.requests) keyed requests (\
            \(requests.filter { if case .checkout = $0.kind { true } else { false } }.count) checkouts), \(tally.resends) resends \
            (answered: \(tally.replayedResends) from the stored key, \(tally.freshResends) applied for the first time, \
            \(tally.refusedResends) refused; the rest were in flight at the next kill); unanswered at a \
            kill: \(tally.inFlightAtKill) in flight, \(tally.droppedAnswers) answers dropped; \(applied.count) applied once, \
            \(tally.refused) refused, \(stored.orders.count) orders
            """)
        #expect(tally.replayedResends > 0 && tally.freshResends > 0 && !stored.orders.isEmpty)
    }

    /// Sends `batch` (pipelined) and reads every answer.
    private static func exchange(
        _ batch: [Int], requests: inout [KeyedRequest], client: MirroringClient, cart: String, tally: inout Tally, seed: UInt64
    ) throws {
        let ids = try client.send(batch.map { requests[$0].call(on: cart) })
        for index in batch { requests[index].sends += 1 }
        for (index, id) in zip(batch, ids) {
            try take(try client.response(to: id), for: index, requests: &requests, tally: &tally, seed: seed, shown: client.mirrors[cart]?.state)
        }
    }

    /// Takes an answer the client saw (`shown`: the cart's state then, for the failure messages).
    private static func take(_ answer: JSONValue, for index: Int, requests: inout [KeyedRequest], tally: inout Tally, seed: UInt64, shown: JSONValue? = nil) throws {
        let request = requests[index]
        if let result = answer["result"] {
            let replayed = result["replayed"] == true
            // A key sent once has nothing stored to replay.
            try #require(!replayed || request.sends > 1, "\(request.key) answered replayed on its first send: \(answer) (seed \(seed))")
            let orderId = result["orderId"]?.stringValue
            if case .checkout = request.kind {
                #expect(orderId != nil, "\(request.key): a checkout answered without its order: \(answer); the cart showed \(shown ?? .null) (seed \(seed))")
            }
            requests[index].outcome = .applied(replayed: replayed, orderId: orderId)
            if request.sends > 1 {
                if replayed { tally.replayedResends += 1 } else { tally.freshResends += 1 }
            }
        } else {
            // Refused: an empty cart, a cart changed since the checkout's server showed it, too many units.
            try #require(answer["error"]?["code"] == -32001, "\(request.key): \(answer) (seed \(seed))")
            let reason = answer["error"]?["data"]?["reason"]?.stringValue ?? "?"
            try #require(reason != "idempotencyKeyReused", "\(request.key) was resent with the same params: \(answer)")
            requests[index].outcome = .refused(reason)
            tally.refused += 1
            if request.sends > 1 { tally.refusedResends += 1 }
        }
    }
}
