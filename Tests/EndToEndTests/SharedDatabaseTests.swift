import Randomness
import JSON
import Testing

/// Two servers writing one database file at the same time lose nothing, corrupt nothing, and each sees
/// the other's commits when it loads again.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct SharedDatabaseTests {
    /// One server and what its client knows.
    struct Side {
        let name: String
        let server: ServerProcess
        let client: MirroringClient
        var cart = ""
        var dashboard = ""
    }

    @Test func twoServersWritingOneFileKeepEveryAcknowledgedWrite() throws {
        try share(["A", "B"], on: .sqlite)
    }

    /// The same with four servers on one PostgreSQL database.
    @Test(.enabled(if: TestDatabase.hasPostgres, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster (scripts/test.sh starts one)"))
    func fourServersWritingOnePostgreSQLDatabaseKeepEveryAcknowledgedWrite() throws {
        try share(["A", "B", "C", "D"], on: .postgres)
    }

    private func share(_ names: [String], on engine: TestDatabase.Engine) throws {
        let folder = try TemporaryDirectory()
        let path = try TestDatabase.make(engine, in: folder)
        // All start on a database that does not exist yet: they race to create, migrate and seed it.
        var sides = try names.map { name in
            let server = try ServerProcess(["--database", path, "--framing", "ndjson"], timeoutSeconds: 60)
            return Side(name: name, server: server, client: MirroringClient(server))
        }
        var account: SignedInAccount?
        for index in sides.indices {
            try sides[index].client.initialize()
            // Both servers are sessions of one account, so they write one cart.
            if let account { try sides[index].client.resume(account) } else { account = try sides[index].client.signUp(email: "shared@example.com") }
            sides[index].cart = try sides[index].client.open("cart")
            sides[index].dashboard = try sides[index].client.open("dashboard")
            try sides[index].client.waitUntil(sides[index].cart) { $0["phase"] == "loaded" }
        }
        let owner = try #require(account).owner
        let start = try StoredShop.read(path: path, owner: owner)
        let pool = start.stock.keys.sorted().filter { start.stock[$0]! >= 30 && start.maxPerOrder[$0]! >= 5 }.prefix(10)
        try #require(pool.count >= 5)

        var random = SeededRandom(seed: 0x5A4E_D0B1)
        var added: [String: Int] = [:]
        var orders: Set<String> = []
        var tally = (adds: 0, refusals: 0, failures: 0)
        for _ in 0..<environmentInteger("STOREFRONT_SHARED_ROUNDS", default: 80) {
            // Each server gets one request, all written before any is read: the processes write at the
            // same time, each in its own transactions.
            var sent: [(side: Int, id: Int64, product: String?, quantity: Int)] = []
            for index in sides.indices {
                let side = sides[index]
                if Int.random(in: 0..<5, using: &random) == 0 {
                    sent.append((index, try side.client.send([("cart/checkout", ["viewModel": .string(side.cart)])])[0], nil, 0))
                } else {
                    let product = pool.randomElement(using: &random)!
                    let quantity = Int.random(in: 1...2, using: &random)
                    let params: JSONValue = ["viewModel": .string(side.cart), "productId": .string(product), "quantity": .integer(Int64(quantity))]
                    sent.append((index, try side.client.send([("cart/add", params)])[0], product, quantity))
                }
            }
            for request in sent {
                let side = sides[request.side]
                let response = try side.client.response(to: request.id)
                if response["error"] != nil {
                    #expect(response["error"]?["code"] == -32001, "\(side.name): \(response)")
                    tally.refusals += 1
                } else if let product = request.product {
                    // An add that failed in the store answers normally and shows the failure in the state.
                    if side.client.mirrors[side.cart]?.state["error"] == .null {
                        added[product, default: 0] += request.quantity
                        tally.adds += 1
                    } else {
                        tally.failures += 1
                    }
                } else if let orderId = response["result"]?["orderId"]?.stringValue {
                    orders.insert(orderId)
                } else {
                    tally.failures += 1
                }
            }
        }

        let stored = try StoredShop.read(path: path, owner: owner)
        #expect(stored.inconsistencies(initialStock: start.stock).isEmpty, "\(stored.inconsistencies(initialStock: start.stock))")
        #expect(stored.integrity == "ok")
        #expect(Set(stored.orders.keys) == orders, "the orders are exactly the acknowledged checkouts")
        // Every acknowledged unit is in an order or still in the cart.
        let units = stored.orderedUnits
        for product in pool {
            #expect(added[product, default: 0] == units[product, default: 0] + stored.cart[product, default: 0], "\(product)")
        }
        #expect(Set(stored.cart.keys).isSubset(of: Set(pool)))

        // Loading again, each server shows the file, the other's writes included.
        let newestOrders = orders.sorted(by: >).prefix(3).map { JSONValue.string($0) }
        for side in sides {
            let cart = try side.client.open("cart")
            try side.client.waitUntil(cart) { $0["phase"] == "loaded" }
            #expect(DurabilityTests.lines(of: side.client.mirrors[cart]!.state) == stored.cart, "\(side.name)'s reloaded cart")
            _ = try side.client.result("dashboard/reload", ["viewModel": .string(side.dashboard)])
            let recent = side.client.mirrors[side.dashboard]?.state["recentOrders"]
            #expect(recent?["phase"] == "loaded")
            #expect(recent?["items"]?.arrayValue?.compactMap { $0["id"] } == newestOrders, "\(side.name)'s reloaded dashboard")
        }
        for side in sides {
            side.server.closeInput()
            #expect(try side.server.waitForExit() == 0)
        }
        #expect(try StoredShop.read(path: path, owner: owner).integrity == "ok")
        print("""
            shared database: \(names.count) servers on \(engine), \(tally.adds) adds and \(orders.count) checkouts acknowledged, \(tally.refusals) refused, \
            \(tally.failures) failed in the store; integrity ok, every acknowledged unit accounted for
            """)
        #expect(orders.count > 0 && tally.adds > 0)
    }
}
