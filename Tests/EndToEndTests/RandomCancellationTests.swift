import Randomness
import JSON
import Testing

/// Cart writes cancelled with `$/cancelRequest` at seeded-random moments, under `--faults` latency on the
/// cart and orders, so that a cancellation lands before, during and after the service call and the
/// commit: a success always has its effect, stored and shown by every open cart by the time it is
/// answered; a -32800 never has one.
///
/// Each write has an effect no other write of its phase can have (its own product in the cart, or the
/// order), so the file says which writes took effect. The verdict uses the answers, never the time.
///
/// `STOREFRONT_CANCEL_ROUNDS` sets the number of rounds (default 40), `STOREFRONT_SEED` the seed.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct RandomCancellationTests {
    /// A write and what it does to the product it names (nil: the line goes), or to the whole cart.
    struct Write {
        enum Effect {
            /// The line of `productId` has `quantity` units (nil: no line) after it, and had `before`.
            case line(productId: String, quantity: Int?, before: Int?)
            /// The cart is empty after it.
            case clear(before: [StoredShop.StoredLine])
            /// An order with these lines is placed and the cart is emptied.
            case checkout(before: [StoredShop.StoredLine])
        }

        let method: String
        let params: JSONValue
        let effect: Effect
    }

    /// What the client saw when a write's answer came.
    struct Answer {
        var message: JSONValue
        /// Whether its `$/cancelRequest` had been sent.
        var cancelledBefore: Bool
        /// The lines of each open cart as its mirror showed them when the answer was read.
        var shown: [[StoredShop.StoredLine]]
        var lastOrder: JSONValue?
    }

    /// The server, its client with the two carts open, and what the rounds counted.
    @MainActor
    final class Session {
        let client: MirroringClient
        /// The cart written to, and a second cart that only watches: both must show a success by its answer.
        let carts: [String]
        let path: String
        /// The signed-in account's owner key: whose cart the file is read for.
        let owner: String
        let latency: Int
        var random: SeededRandom
        var tally = Tally()

        init(client: MirroringClient, carts: [String], path: String, owner: String, latency: Int, random: SeededRandom) {
            self.client = client
            self.carts = carts
            self.path = path
            self.owner = owner
            self.latency = latency
            self.random = random
        }
    }

    /// Figures for the log.
    struct Tally {
        var writes = 0
        var cancelRequests = 0
        /// Cancellations sent before their request's answer was read.
        var cancelledBeforeAnswer = 0
        var succeeded = 0
        var succeededThoughCancelled = 0
        var cancelled = 0
        var refused = 0
        var orders = 0
    }

    @Test func aCancelledWriteAnswersSuccessOnlyWithItsEffectAndCancelledOnlyWithout() throws {
        let rounds = environmentInteger("STOREFRONT_CANCEL_ROUNDS", default: 40)
        let seed = UInt64(environmentInteger("STOREFRONT_SEED", default: 20_261_124))
        var random = SeededRandom(seed: seed)
        let latency = Int.random(in: 5...20, using: &random)
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let server = try ServerProcess(
            ["--database", path, "--framing", "ndjson", "--faults", "cart:latency=\(latency)ms;orders:latency=\(latency)ms"],
            timeoutSeconds: 60)
        let client = MirroringClient(server)
        try client.initialize()
        // Signed in, so that the checkouts are placed (a guest's would all be refused, and prove nothing).
        let owner = try client.signUp(email: "cancellation@example.com").owner
        let carts = [try client.open("cart"), try client.open("cart")]
        for cart in carts { try client.waitUntil(cart) { $0["phase"] == "loaded" } }
        let session = Session(client: client, carts: carts, path: path, owner: owner, latency: latency, random: random)
        let initialStock = try StoredShop.read(path: path, owner: owner).stock

        for round in 0..<rounds {
            let context = "round \(round) (seed \(seed), latency \(latency) ms)"
            var stored = try StoredShop.read(path: path, owner: owner)
            // A cancellable clear, then, if it did not happen, one that is not cancelled.
            if !stored.cart.isEmpty {
                let clear = Write(method: "cart/clear", params: ["viewModel": .string(carts[0])], effect: .clear(before: stored.cartLines))
                stored = try run([clear], in: session, context: context)
                if !stored.cart.isEmpty {
                    _ = try client.result("cart/clear", ["viewModel": .string(carts[0])])
                    stored = try StoredShop.read(path: path, owner: owner)
                }
            }
            // Adds, each of its own product.
            let inStock = stored.stock.keys.sorted().filter { stored.stock[$0]! >= 10 && stored.maxPerOrder[$0]! >= 4 }
            try #require(inStock.count >= 8, "products in stock, \(context)")
            let adds = inStock.shuffled(using: &session.random).prefix(Int.random(in: 3...8, using: &session.random)).map { productId in
                let quantity = Int.random(in: 1...3, using: &session.random)
                return Write(method: "cart/add", params: keyed([
                    "viewModel": .string(carts[0]), "productId": .string(productId), "quantity": .integer(Int64(quantity)),
                ], random: &session.random), effect: .line(productId: productId, quantity: quantity, before: nil))
            }
            stored = try run(adds, in: session, context: context)
            // Changes of the lines there are now, each of its own line.
            let changes = stored.cartLines.filter { _ in Int.random(in: 0..<4, using: &session.random) != 0 }.map { line in
                let viewModel = JSONValue.string(carts[0])
                let product = JSONValue.string(line.productId)
                switch Int.random(in: 0..<3, using: &session.random) {
                case 0:
                    return Write(method: "cart/remove", params: keyed(["viewModel": viewModel, "productId": product], random: &session.random),
                                 effect: .line(productId: line.productId, quantity: nil, before: line.quantity))
                default:
                    let quantity = [0, 1, 2, 3, 4].filter { $0 != line.quantity }.randomElement(using: &session.random)!
                    return Write(method: "cart/setQuantity", params: keyed([
                        "viewModel": viewModel, "productId": product, "quantity": .integer(Int64(quantity)),
                    ], random: &session.random), effect: .line(productId: line.productId, quantity: quantity == 0 ? nil : quantity, before: line.quantity))
                }
            }
            stored = try run(changes, in: session, context: context)
            // A checkout of what is left.
            if !stored.cart.isEmpty {
                let checkout = Write(method: "cart/checkout", params: keyed(["viewModel": .string(carts[0])], random: &session.random),
                                     effect: .checkout(before: stored.cartLines))
                let ordersBefore = Set(stored.orders.keys)
                stored = try run([checkout], in: session, context: context, ordersBefore: ordersBefore)
            }
            let problems = stored.inconsistencies(initialStock: initialStock)
            try #require(problems.isEmpty, "\(context): \(problems)")
        }

        // Every open cart shows the file, and its mirror is what the server holds.
        let stored = try StoredShop.read(path: path, owner: owner)
        for cart in carts {
            let current = try client.get(cart)
            #expect(current.state == client.mirrors[cart]?.state && current.version == client.mirrors[cart]?.version)
            #expect(StoredShop.cartLines(of: current.state) == stored.cartLines)
        }
        server.closeInput()
        #expect(try server.waitForExit() == 0)
        let tally = session.tally
        print("""
            random cancellation (seed \(seed), latency \(latency) ms): \(rounds) rounds, \(tally.writes) writes, \
            \(tally.cancelRequests) $/cancelRequest sent, \(tally.cancelledBeforeAnswer) before the answer: \(tally.cancelled) \
            answered -32800 with nothing stored, \(tally.succeededThoughCancelled) answered success (too late to stop) with their \
            effect stored and shown; \(tally.succeeded) successes in all, \(tally.refused) refused, \(tally.orders) orders
            """)
        // Orders too: a checkout nobody cancelled is always placed (it is the session's own cart).
        #expect(tally.cancelled > 0 && tally.succeededThoughCancelled > 0 && tally.orders > 0)
    }

    /// Half the writes carry an idempotency key (the server looks it up before the write): both paths.
    private func keyed(_ params: JSONValue, random: inout SeededRandom) -> JSONValue {
        guard Int.random(in: 0..<2, using: &random) == 0, var members = params.objectValue else { return params }
        members["idempotencyKey"] = .string("k\(random.next())")
        return .object(members)
    }

    /// Sends `writes` in one write, cancels most of them after random delays, reads every answer, and
    /// checks each against the file. Returns the file as it is afterwards.
    private func run(_ writes: [Write], in session: Session, context: String, ordersBefore: Set<String> = []) throws -> StoredShop {
        let (client, carts, path, owner, latency) = (session.client, session.carts, session.path, session.owner, session.latency)
        guard !writes.isEmpty else { return try StoredShop.read(path: path, owner: owner) }
        let clock = ContinuousClock()
        let started = clock.now
        let ids = try client.send(writes.map { ($0.method, $0.params) })
        session.tally.writes += writes.count
        // Most are cancelled, after 0 to two latencies: before, during and after the service call and the commit.
        var cancels = zip(ids, writes).compactMap { id, _ -> (at: Duration, id: Int64)? in
            Int.random(in: 0..<4, using: &session.random) == 0 ? nil : (.milliseconds(Int.random(in: 0...(2 * latency + 5), using: &session.random)), id)
        }.sorted { $0.at < $1.at }
        session.tally.cancelRequests += cancels.count
        var cancelSent: Set<Int64> = []
        var answers: [Int64: Answer] = [:]
        var quietSince = clock.now
        while answers.count < ids.count || !cancels.isEmpty {
            if let next = cancels.first, clock.now - started >= next.at {
                cancels.removeFirst()
                cancelSent.insert(next.id)
                try client.server.send([#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":\#(next.id)}}"#], framing: .ndjson)
                continue
            }
            let wait = cancels.first.map { $0.at - (clock.now - started) } ?? .milliseconds(100)
            let waitMilliseconds = wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000
            let messages = try client.server.receiveAvailable(framing: .ndjson, waitingMilliseconds: Int32(max(1, min(100, waitMilliseconds))))
            if messages.isEmpty {
                try #require(clock.now - quietSince < .seconds(60), "no answer within 60 s, \(context)")
                continue
            }
            quietSince = clock.now
            for message in messages {
                try client.handle(message)
                guard let id = message["id"]?.integerValue, ids.contains(id), let taken = client.takeResponse(id) else { continue }
                answers[id] = Answer(
                    message: taken, cancelledBefore: cancelSent.contains(id), shown: carts.map { StoredShop.cartLines(of: client.mirrors[$0]!.state) },
                    lastOrder: client.mirrors[carts[0]]?.state["lastOrder"])
            }
        }

        let stored = try StoredShop.read(path: path, owner: owner)
        for (id, write) in zip(ids, writes) {
            let answer = answers[id]!
            let what = "\(write.method) \(write.params) answered \(answer.message)\(answer.cancelledBefore ? " after its $/cancelRequest" : ""), \(context)"
            let code = answer.message["error"]?["code"]
            let succeeded = answer.message["result"] != nil
            try #require(succeeded || code == -32800 || code == -32001, "\(what)")
            if answer.cancelledBefore { session.tally.cancelledBeforeAnswer += 1 }
            if succeeded {
                session.tally.succeeded += 1
                if answer.cancelledBefore { session.tally.succeededThoughCancelled += 1 }
            } else if code == -32800 {
                session.tally.cancelled += 1
                try #require(answer.cancelledBefore, "\(what): cancelled though no $/cancelRequest named it")
            } else {
                session.tally.refused += 1
            }
            switch write.effect {
            case .line(let productId, let quantity, let before):
                let expected = succeeded ? quantity : before
                #expect(stored.cart[productId] == expected, "\(what): the file holds \(stored.cart[productId].map(String.init) ?? "no line")")
                if succeeded {
                    for (index, shown) in answer.shown.enumerated() {
                        #expect(shown.first { $0.productId == productId }?.quantity == quantity,
                                "\(what): cart \(index + 1) showed \(shown) when the answer came")
                    }
                } else {
                    for (index, shown) in answer.shown.enumerated() {
                        #expect(shown.first { $0.productId == productId }?.quantity == before,
                                "\(what): cart \(index + 1) showed \(shown) when the answer came")
                    }
                }
            case .clear(let before):
                #expect(stored.cartLines == (succeeded ? [] : before), "\(what): the file holds \(stored.cartLines)")
                if succeeded { #expect(answer.shown.allSatisfy { $0.isEmpty }, "\(what): the carts showed \(answer.shown)") }
            case .checkout(let before):
                let placed = Set(stored.orders.keys).subtracting(ordersBefore)
                if succeeded {
                    session.tally.orders += 1
                    let orderId = answer.message["result"]?["orderId"]?.stringValue
                    #expect(placed == Set([orderId].compactMap { $0 }) && stored.cartLines.isEmpty, "\(what): orders placed \(placed.sorted())")
                    #expect(stored.orders[orderId ?? ""]?.lines == Dictionary(uniqueKeysWithValues: before.map { ($0.productId, $0.quantity) }),
                            "\(what): the order holds \(String(describing: stored.orders[orderId ?? ""]))")
                    #expect(answer.shown.allSatisfy { $0.isEmpty } && answer.lastOrder?["id"]?.stringValue == orderId,
                            "\(what): the carts showed \(answer.shown), last order \(String(describing: answer.lastOrder))")
                } else {
                    #expect(placed.isEmpty && stored.cartLines == before, "\(what): orders placed \(placed.sorted()), cart \(stored.cartLines)")
                }
            }
        }
        return stored
    }
}
