import Randomness
import JSON
import Testing

/// Several servers on one new database file, signed in to one account, each showing the cart (the first also a product page), each
/// sent a seeded-random share of cart changes and checkouts: whenever nothing is in flight (every tenth
/// step), every open cart in every server comes to show the cart stored in the file, and `viewModel/get`
/// says the same.
///
/// The verdict never depends on how fast a change reaches the other servers: the test waits (60 s
/// without a message at most, a guard against a hang, not a figure) until each mirror shows the stored
/// cart, then compares.
///
/// `STOREFRONT_CONVERGENCE_STEPS` sets the number of steps (default 150), `STOREFRONT_SEED` the seed.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct ConvergenceTests {
    /// One server and the ViewModels its client has open.
    struct Side {
        let name: String
        let server: ServerProcess
        let client: MirroringClient
        var cart = ""
        /// A product page (first server only) and its product.
        var detail: (handle: String, productId: String)?
    }

    /// Figures for the log.
    struct Tally {
        var sent = 0
        var succeeded = 0
        /// -32001 by `data.reason` (a line another server removed, a cart another server changed, ...).
        var refused: [String: Int] = [:]
        var checkouts = 0
        /// Times every open ViewModel was waited for and compared with the file.
        var checkpoints = 0
    }

    @Test(arguments: [2, 4])
    func everyOpenCartConvergesToTheStoredCart(servers count: Int) throws {
        try converge(servers: count, on: .sqlite)
    }

    /// The same with 4 servers on one PostgreSQL database, each following the others through LISTEN/NOTIFY.
    @Test(.enabled(if: TestDatabase.hasPostgres, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster (scripts/test.sh starts one)"))
    func everyOpenCartConvergesToTheStoredCartOnPostgreSQL() throws {
        try converge(servers: 4, on: .postgres)
    }

    private func converge(servers count: Int, on engine: TestDatabase.Engine) throws {
        let steps = environmentInteger("STOREFRONT_CONVERGENCE_STEPS", default: 150)
        let seed = UInt64(environmentInteger("STOREFRONT_SEED", default: 20_261_122))
        var random = SeededRandom(seed: seed &+ UInt64(count))
        let folder = try TemporaryDirectory()
        let path = try TestDatabase.make(engine, in: folder)
        // All start on a database that does not exist yet: they race to create, migrate and seed it.
        var sides = try (0..<count).map { index in
            let server = try ServerProcess(["--database", path, "--framing", "ndjson"], timeoutSeconds: 60)
            return Side(name: "server \(index + 1)", server: server, client: MirroringClient(server))
        }
        // Every server is a session of one account (registered in the first, resumed in the others): one cart.
        var account: SignedInAccount?
        for index in sides.indices {
            try sides[index].client.initialize()
            if let account { try sides[index].client.resume(account) } else { account = try sides[index].client.signUp(email: "convergence@example.com") }
            sides[index].cart = try sides[index].client.open("cart")
            try sides[index].client.waitUntil(sides[index].cart) { $0["phase"] == "loaded" }
        }
        let owner = try #require(account).owner
        let start = try StoredShop.read(path: path, owner: owner)
        var pool = Self.pool(start)
        try #require(pool.count == 6, "the demo catalog has products with stock")
        let watched = pool[0]
        sides[0].detail = (try sides[0].client.open("productDetail", args: ["productId": .string(watched)]), watched)
        try sides[0].client.waitUntil(sides[0].detail!.handle) { $0["phase"] == "loaded" }

        // Each step writes a short pipeline to some of the servers, all before reading any answer, so the
        // processes write at the same time and each has several changes in flight; then it reads every
        // answer. Pipelined (not one by one) because concurrent commits in several processes, with feeds
        // following each other's entries meanwhile, are what could leave a server showing a stale cart;
        // answers are read before the next step so that the test knows when nothing is in flight.
        // Every tenth step, each server adds a unit of a product of its own, all at once (the cart then
        // has lines each server learns of only from the others), and every open ViewModel must come to
        // show the file.
        var tally = Tally()
        var stored = start
        for step in 1...steps {
            var sent: [(side: Int, ids: [Int64])] = []
            if step % 10 == 0 || step == steps {
                for index in sides.indices {
                    let add: JSONValue = ["viewModel": .string(sides[index].cart), "productId": .string(pool[index]), "quantity": 1]
                    sent.append((index, try sides[index].client.send([("cart/add", add)])))
                }
            } else {
                for index in sides.indices where Int.random(in: 0..<2, using: &random) == 0 || index == sides.count - 1 && sent.isEmpty {
                    let calls = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                        Self.randomCall(on: sides[index].cart, pool: pool, random: &random)
                    }
                    sent.append((index, try sides[index].client.send(calls)))
                    tally.checkouts += calls.filter { $0.method == "cart/checkout" }.count
                }
            }
            for (index, ids) in sent {
                for id in ids {
                    let answer = try sides[index].client.response(to: id)
                    tally.sent += 1
                    if answer["result"] != nil {
                        tally.succeeded += 1
                    } else {
                        try #require(answer["error"]?["code"] == -32001, "\(sides[index].name): \(answer) (seed \(seed))")
                        tally.refused[answer["error"]?["data"]?["reason"]?.stringValue ?? "?", default: 0] += 1
                    }
                }
            }
            if step % 10 == 0 || step == steps {
                stored = try Self.expectConverged(sides, path: path, owner: owner, initialStock: start.stock, context: "step \(step) (seed \(seed))")
                tally.checkpoints += 1
                // Orders use the stock up: long runs move on to products that still have some.
                if Self.pool(stored).count == 6 { pool = Self.pool(stored) }
            }
        }
        for side in sides {
            side.server.closeInput()
            #expect(try side.server.waitForExit() == 0)
        }
        #expect(try StoredShop.read(path: path, owner: owner).integrity == "ok")
        let refused = tally.refused.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        print("""
            convergence (\(count) servers on \(engine), seed \(seed)): \(steps) steps, \(tally.sent) actions (\(tally.checkouts) checkouts), \
            \(tally.succeeded) succeeded, refused: \(refused.isEmpty ? "none" : refused); \(stored.orders.count) orders; \
            at each of \(tally.checkpoints) checkpoints every open cart came to show the stored one (last \(stored.cartLines))
            """)
        #expect(tally.succeeded > 0 && !stored.orders.isEmpty)
    }

    /// With nothing in flight, waits until every open cart (and the product page) shows what the file
    /// holds, then checks that each mirror is what `viewModel/get` returns and that every server shows the
    /// same lines and totals. Returns the file's contents.
    static func expectConverged(_ sides: [Side], path: String, owner: String, initialStock: [String: Int], context: String) throws -> StoredShop {
        let stored = try StoredShop.read(path: path, owner: owner)
        let problems = stored.inconsistencies(initialStock: initialStock)
        try #require(problems.isEmpty, "\(context): \(problems)")
        for side in sides {
            do {
                // Bounded by the client's 60 s wait for a message: a guard against a hang, not a figure.
                try side.client.waitUntil(side.cart) { StoredShop.cartLines(of: $0) == stored.cartLines }
                if let detail = side.detail {
                    try side.client.waitUntil(detail.handle) { state in
                        state["inCart"] == .integer(Int64(stored.cart[detail.productId] ?? 0))
                            && state["product"]?["stock"] == .integer(Int64(stored.stock[detail.productId]!))
                    }
                }
            } catch {
                let shown = side.client.mirrors[side.cart].map { StoredShop.cartLines(of: $0.state) } ?? []
                Issue.record("\(context): \(side.name) shows \(shown), the file holds \(stored.cartLines): \(error)")
                throw error
            }
        }
        let first = try #require(sides[0].client.mirrors[sides[0].cart]?.state)
        for side in sides {
            for handle in [side.cart] + (side.detail.map { [$0.handle] } ?? []) {
                let current = try side.client.get(handle)
                let mirror = side.client.mirrors[handle]
                #expect(current.state == mirror?.state && current.version == mirror?.version,
                        "\(context): \(side.name) \(handle): the mirror is v\(mirror?.version ?? -1), the server v\(current.version)")
            }
            let state = try #require(side.client.mirrors[side.cart]?.state)
            #expect(StoredShop.cartLines(of: state) == stored.cartLines,
                    "\(context): \(side.name) shows \(StoredShop.cartLines(of: state)), the file holds \(stored.cartLines)")
            // Names, prices and totals too: every server shows the same cart.
            #expect(state["lines"] == first["lines"] && state["totals"] == first["totals"], "\(context): \(side.name)")
        }
        return stored
    }

    /// Six products that can take a few more units, by id.
    static func pool(_ stored: StoredShop) -> [String] {
        Array(stored.stock.keys.sorted().filter { stored.stock[$0]! >= 30 && stored.maxPerOrder[$0]! >= 5 }.prefix(6))
    }

    /// A cart action on a product of `pool`: mostly adds, then quantity changes, removals, checkouts
    /// and clears. The client does not track the cart (other servers change it), so some are refused.
    static func randomCall(on cart: String, pool: [String], random: inout SeededRandom) -> (method: String, params: JSONValue) {
        let product = JSONValue.string(pool.randomElement(using: &random)!)
        let viewModel = JSONValue.string(cart)
        switch Int.random(in: 0..<20, using: &random) {
        case 0..<8:
            return ("cart/add", ["viewModel": viewModel, "productId": product, "quantity": .integer(Int64.random(in: 1...3, using: &random))])
        case 8..<12:
            return ("cart/setQuantity", ["viewModel": viewModel, "productId": product, "quantity": .integer(Int64.random(in: 0...4, using: &random))])
        case 12..<15:
            return ("cart/remove", ["viewModel": viewModel, "productId": product])
        case 15:
            return ("cart/clear", ["viewModel": viewModel])
        default:
            return ("cart/checkout", ["viewModel": viewModel])
        }
    }
}
