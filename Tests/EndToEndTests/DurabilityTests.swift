import Randomness
import JSON
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A server killed with SIGKILL at seeded-random moments, then restarted on the same database file,
/// loses no acknowledged change and leaves no checkout half done.
///
/// `STOREFRONT_KILLS` sets the number of kills (default 50), `STOREFRONT_SEED` the seed.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct DurabilityTests {
    /// A change to one cart line.
    enum CartChange: CustomStringConvertible {
        case add(String, Int)
        case setQuantity(String, Int)
        case remove(String)

        var productId: String {
            switch self {
            case .add(let id, _), .setQuantity(let id, _), .remove(let id): id
            }
        }

        /// The method and params that make this change on `cart`.
        func call(on cart: String) -> (method: String, params: JSONValue) {
            switch self {
            case .add(let id, let quantity):
                ("cart/add", ["viewModel": .string(cart), "productId": .string(id), "quantity": .integer(Int64(quantity))])
            case .setQuantity(let id, let quantity):
                ("cart/setQuantity", ["viewModel": .string(cart), "productId": .string(id), "quantity": .integer(Int64(quantity))])
            case .remove(let id):
                ("cart/remove", ["viewModel": .string(cart), "productId": .string(id)])
            }
        }

        /// The line's quantity after this change succeeded on a line of `quantity` (nil: no line).
        func applied(to quantity: Int?) -> Int? {
            switch self {
            case .add(_, let added): (quantity ?? 0) + added
            case .setQuantity(_, let new): new == 0 ? nil : new
            case .remove: nil
            }
        }

        var description: String {
            switch self {
            case .add(let id, let quantity): "add \(id) \(quantity)"
            case .setQuantity(let id, let quantity): "setQuantity \(id) \(quantity)"
            case .remove(let id): "remove \(id)"
            }
        }
    }

    /// What the client sends at once: changes to distinct lines (so their order does not matter), or a checkout.
    enum Batch {
        case changes([CartChange])
        case checkout
    }

    /// What the acknowledged responses imply the database holds.
    struct Model {
        var cart: [String: Int] = [:]
        /// Lines by order id.
        var orders: [String: [String: Int]] = [:]
    }

    /// Figures for the log.
    struct Tally {
        var kills = 0
        var acknowledgedChanges = 0
        var refusedChanges = 0
        var acknowledgedCheckouts = 0
        var unacknowledgedChanges = 0
        var unacknowledgedChangesApplied = 0
        var unacknowledgedCheckouts = 0
        var unacknowledgedCheckoutsApplied = 0
    }

    @Test func acknowledgedChangesAndCheckoutsSurviveKillsAndNoCheckoutIsHalfDone() throws {
        let kills = environmentInteger("STOREFRONT_KILLS", default: 50)
        let seed = UInt64(environmentInteger("STOREFRONT_SEED", default: 20_261_121))
        var random = SeededRandom(seed: seed)
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        var model = Model()
        var tally = Tally()
        var initialStock: [String: Int] = [:]
        // The account whose cart every life changes: signed up in the first, its token resumed in each restart.
        var account: SignedInAccount?

        for life in 0...kills {
            let server = try ServerProcess(["--database", path, "--framing", "ndjson"], timeoutSeconds: 60)
            let client = MirroringClient(server)
            try client.initialize()
            if let account { try client.resume(account) } else { account = try client.signUp(email: "durability@example.com") }
            let owner = try #require(account).owner
            let cart = try client.open("cart")
            try client.waitUntil(cart) { $0["phase"] == "loaded" }
            try #require(Self.lines(of: client.mirrors[cart]!.state) == model.cart,
                         "life \(life): the restarted server shows the cart the database holds (seed \(seed))")
            let stored = try StoredShop.read(path: path, owner: owner)
            if life == 0 { initialStock = stored.stock }
            // Products that can take a few more units; refusals (stock, maximum) still happen and are checked.
            let pool = stored.stock.keys.sorted().filter { stored.stock[$0]! >= 30 && stored.maxPerOrder[$0]! >= 5 }.prefix(12)
            try #require(pool.count >= 6, "the demo catalog has products with stock")

            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let batch = Self.makeBatch(model: model, pool: Array(pool), random: &random)
                let ids = try client.send(Self.calls(batch, cart: cart))
                let responses = try ids.map { try client.response(to: $0) }
                try Self.acknowledge(batch, responses: responses, model: &model, tally: &tally)
            }
            if life == kills {
                server.closeInput()
                #expect(try server.waitForExit() == 0)
                let problems = Self.check(try StoredShop.read(path: path, owner: owner), model: &model, pending: nil, initialStock: initialStock)
                #expect(problems.isEmpty, "after the last server exited (seed \(seed)):\n\(problems.joined(separator: "\n"))")
                break
            }

            // The kill: send a batch and some pings, read a random number of messages, SIGKILL.
            let batch = Self.makeBatch(model: model, pool: Array(pool), random: &random)
            let pings = Int.random(in: 0...6, using: &random)
            let ids = try client.send(Self.calls(batch, cart: cart) + Array(repeating: (method: "ping", params: [:]), count: pings))
            let batchIDs = ids.prefix(Self.calls(batch, cart: cart).count)
            // At least one message per request will come, so this many can be waited for.
            for _ in 0..<Int.random(in: 0...ids.count, using: &random) { try client.receiveOne() }
            if Int.random(in: 0..<4, using: &random) == 0 {
                // Answers lost on the way: the work is done, the client never learns of it.
                for id in batchIDs { _ = try client.response(to: id) }
            }
            #expect(try server.killAndWait() == 128 + SIGKILL)
            tally.kills += 1

            let answered = batchIDs.map { client.takeResponse($0) }
            var pending: Batch?
            switch batch {
            case .checkout:
                if let response = answered[0] {
                    try Self.acknowledge(batch, responses: [response], model: &model, tally: &tally)
                } else {
                    pending = .checkout
                }
            case .changes(let changes):
                let acknowledged = zip(changes, answered).compactMap { change, response in response.map { (change, $0) } }
                try Self.acknowledge(.changes(acknowledged.map(\.0)), responses: acknowledged.map(\.1), model: &model, tally: &tally)
                let unacknowledged = zip(changes, answered).filter { $0.1 == nil }.map(\.0)
                if !unacknowledged.isEmpty { pending = .changes(unacknowledged) }
            }
            let afterKill = try StoredShop.read(path: path, owner: owner)
            let before = model
            let problems = Self.check(afterKill, model: &model, pending: pending, initialStock: initialStock)
            try #require(problems.isEmpty, "after kill \(tally.kills) (seed \(seed)), pending \(String(describing: pending)):\n\(problems.joined(separator: "\n"))")
            switch pending {
            case .checkout:
                tally.unacknowledgedCheckouts += 1
                if model.orders.count > before.orders.count { tally.unacknowledgedCheckoutsApplied += 1 }
            case .changes(let changes):
                tally.unacknowledgedChanges += changes.count
                tally.unacknowledgedChangesApplied += changes.filter {
                    model.cart[$0.productId] != before.cart[$0.productId]
                }.count
            case nil: break
            }
        }
        print("""
            durability (seed \(seed)): \(tally.kills) kills survived; acknowledged: \(tally.acknowledgedChanges) cart changes \
            (+\(tally.refusedChanges) refused), \(tally.acknowledgedCheckouts) checkouts; in flight at a kill: \
            \(tally.unacknowledgedChanges) changes (\(tally.unacknowledgedChangesApplied) applied), \
            \(tally.unacknowledgedCheckouts) checkouts (\(tally.unacknowledgedCheckoutsApplied) applied); \
            \(model.orders.count) orders, integrity ok
            """)
        #expect(tally.kills == kills)
        #expect(tally.acknowledgedCheckouts > 0 && tally.acknowledgedChanges > 0)
    }

    // MARK: Steps

    private static func makeBatch(model: Model, pool: [String], random: inout SeededRandom) -> Batch {
        if !model.cart.isEmpty, Int.random(in: 0..<4, using: &random) == 0 { return .checkout }
        let products = pool.shuffled(using: &random).prefix(Int.random(in: 1...4, using: &random))
        return .changes(products.map { id in
            guard model.cart[id] != nil else {
                // Mostly adds; now and then a change of a line that is not there (refused).
                return Int.random(in: 0..<8, using: &random) == 0 ? .remove(id) : .add(id, Int.random(in: 1...3, using: &random))
            }
            switch Int.random(in: 0..<5, using: &random) {
            case 0: return .add(id, 1)
            case 1: return .remove(id)
            case 2: return .setQuantity(id, 0)
            default: return .setQuantity(id, Int.random(in: 1...4, using: &random))
            }
        })
    }

    private static func calls(_ batch: Batch, cart: String) -> [(method: String, params: JSONValue)] {
        switch batch {
        case .changes(let changes): changes.map { $0.call(on: cart) }
        case .checkout: [("cart/checkout", ["viewModel": .string(cart)])]
        }
    }

    /// Takes acknowledged responses into the model: a success applied, a refusal (-32001) changed nothing.
    private static func acknowledge(_ batch: Batch, responses: [JSONValue], model: inout Model, tally: inout Tally) throws {
        switch batch {
        case .checkout:
            let response = responses[0]
            if let orderId = response["result"]?["orderId"]?.stringValue {
                model.orders[orderId] = model.cart
                model.cart = [:]
                tally.acknowledgedCheckouts += 1
            } else {
                try #require(response["error"]?["code"] == -32001, "a checkout either places an order or is refused: \(response)")
            }
        case .changes(let changes):
            for (change, response) in zip(changes, responses) {
                if response["result"] != nil {
                    model.cart[change.productId] = change.applied(to: model.cart[change.productId])
                    tally.acknowledgedChanges += 1
                } else {
                    try #require(response["error"]?["code"] == -32001, "\(change): \(response)")
                    tally.refusedChanges += 1
                }
            }
        }
    }

    /// Compares the file with the model and `pending` (sent, not acknowledged: may or may not have
    /// happened, but wholly or not at all); adopts what pending work did. Returns the problems.
    private static func check(_ stored: StoredShop, model: inout Model, pending: Batch?, initialStock: [String: Int]) -> [String] {
        var problems = stored.inconsistencies(initialStock: initialStock)
        for (id, lines) in model.orders.sorted(by: { $0.key < $1.key }) where stored.orders[id]?.lines != lines {
            problems.append("acknowledged order \(id) \(lines) is stored as \(String(describing: stored.orders[id]))")
        }
        let newOrders = Set(stored.orders.keys).subtracting(model.orders.keys).sorted()
        switch pending {
        case .checkout:
            if newOrders.isEmpty {
                if stored.cart != model.cart { problems.append("no order was placed, yet the cart is \(stored.cart), not \(model.cart)") }
            } else if newOrders.count > 1 || stored.orders[newOrders[0]]?.lines != model.cart || !stored.cart.isEmpty {
                problems.append("the checkout in flight left orders \(newOrders) and cart \(stored.cart); the cart was \(model.cart)")
            } else {
                model.orders[newOrders[0]] = model.cart
                model.cart = [:]
            }
        case .changes(let changes):
            if !newOrders.isEmpty { problems.append("orders nobody placed: \(newOrders)") }
            let changed = Dictionary(uniqueKeysWithValues: changes.map { ($0.productId, $0) })
            for id in Set(model.cart.keys).union(stored.cart.keys).union(changed.keys).sorted() {
                let allowed = [model.cart[id]] + (changed[id].map { [$0.applied(to: model.cart[id])] } ?? [])
                if !allowed.contains(stored.cart[id]) {
                    problems.append("\(id): quantity \(String(describing: stored.cart[id])), expected one of \(allowed)")
                }
            }
            if problems.isEmpty { model.cart = stored.cart }
        case nil:
            if !newOrders.isEmpty { problems.append("orders nobody placed: \(newOrders)") }
            if stored.cart != model.cart { problems.append("cart \(stored.cart), expected \(model.cart)") }
        }
        return problems
    }

    /// Quantity by product id of a cart state's lines.
    static func lines(of state: JSONValue) -> [String: Int] {
        var lines: [String: Int] = [:]
        for line in state["lines"]?.arrayValue ?? [] {
            if let id = line["productId"]?.stringValue, let quantity = line["quantity"]?.integerValue { lines[id] = Int(quantity) }
        }
        return lines
    }
}
