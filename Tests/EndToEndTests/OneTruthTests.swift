import GRDB
import JSON
import Testing

/// One source of truth across ViewModels, processes and retries: every notification an action causes
/// comes before its answer, an answer says success only if its effect is stored, servers on one file see
/// each other's changes, and keyed retries never apply a change twice.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct OneTruthTests {
    func started(_ arguments: [String]) throws -> (ServerProcess, MirroringClient) {
        let server = try ServerProcess(["--framing", "ndjson"] + arguments, timeoutSeconds: 60)
        let client = MirroringClient(server)
        try client.initialize()
        return (server, client)
    }

    func loaded(_ client: MirroringClient, _ type: String, args: JSONValue = [:]) throws -> String {
        let handle = try client.open(type, args: args)
        try client.waitUntil(handle) { state in
            if let phase = state["phase"] { return phase == "loaded" }
            return state.objectValue?.values.allSatisfy { $0["phase"] == "loaded" } ?? false
        }
        return handle
    }

    @Test func everyNotificationAStoredChangeCausesComesBeforeItsAnswer() throws {
        let (_, client) = try started([])
        // Signed in: a guest cannot check out, and a guest's dashboard has no recent orders to show.
        _ = try client.signUp(email: "notifications@example.com")
        let catalog = try loaded(client, "catalog")
        let dashboard = try loaded(client, "dashboard")
        let form = try loaded(client, "productForm")
        let detail = try loaded(client, "productDetail", args: ["productId": "p-0001"])
        let cart = try loaded(client, "cart")
        let total = try #require(client.get(catalog).state["totalCount"]?.integerValue)
        for (field, value) in [("name", "Order Lamp"), ("price", "12.50"), ("category", "home")] {
            _ = try client.result("productForm/setField", ["viewModel": .string(form), "field": .string(field), "value": .string(value)])
        }
        _ = try client.result("productForm/submit", ["viewModel": .string(form)])
        // The answer has been read: the mirrors already show what the created product changed elsewhere.
        #expect(client.mirrors[catalog]?.state["totalCount"] == .integer(total + 1))
        #expect(try client.get(catalog).state == client.mirrors[catalog]?.state)
        #expect(try client.get(dashboard).state == client.mirrors[dashboard]?.state)

        let stock = try #require(client.mirrors[detail]?.state["product"]?["stock"]?.integerValue)
        _ = try client.result("cart/add", ["viewModel": .string(cart), "productId": "p-0001", "quantity": 1])
        _ = try client.result("cart/checkout", ["viewModel": .string(cart)])
        #expect(client.mirrors[detail]?.state["product"]?["stock"] == .integer(stock - 1))
        #expect(client.mirrors[dashboard]?.state["recentOrders"]?["items"]?.arrayValue?.count == 1)
        for handle in [catalog, dashboard, form, detail, cart] {
            #expect(try client.get(handle).state == client.mirrors[handle]?.state, "\(handle)")
        }
    }

    @Test func aWriteCancelledBeforeItIsStoredAnswersCancelledAndStoresNothing() throws {
        let (_, client) = try started(["--faults", "cart:latency=30s"])
        let cart = try client.open("cart")
        let add = try client.send([("cart/add", ["viewModel": .string(cart), "productId": "p-0001", "quantity": 1])])[0]
        try client.server.send([#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":\#(add)}}"#], framing: .ndjson)
        let answer = try client.response(to: add)
        #expect(answer["error"]?["code"] == -32800, "\(answer)")
        // Nothing was stored, and the cart shows nothing.
        #expect(try client.get(cart).state["lines"] == [])
    }

    @Test func anActionOnAStaleVersionIsRefusedWithTheCurrentOne() throws {
        let (_, client) = try started([])
        let cart = try loaded(client, "cart")
        let version = try client.get(cart).version
        _ = try client.result("cart/add", ["viewModel": .string(cart), "productId": "p-0001", "quantity": 1])
        let stale = try client.call("cart/add", [
            "viewModel": .string(cart), "productId": "p-0002", "quantity": 1, "expectedVersion": .integer(version),
        ])
        #expect(stale["error"]?["code"] == -32004, "\(stale)")
        let current = try client.get(cart)
        #expect(stale["error"]?["data"]?["currentVersion"] == .integer(current.version))
        #expect(current.state["lines"]?.arrayValue?.count == 1)
        let fresh = try client.call("cart/add", [
            "viewModel": .string(cart), "productId": "p-0002", "quantity": 1, "expectedVersion": .integer(current.version),
        ])
        #expect(fresh["result"] != nil, "\(fresh)")
    }

    @Test func aKeyedRetryIsAnsweredWithoutApplyingTwiceInAnyServerAndAfterARestart() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (first, a) = try started(["--database", path])
        // One account in every server (each server is a session of its own, and a guest cannot check out).
        let account = try a.signUp(email: "retries@example.com")
        let cartA = try loaded(a, "cart")
        let add: JSONValue = ["viewModel": .string(cartA), "productId": "p-0003", "quantity": 2, "idempotencyKey": "add-1"]
        #expect(try a.result("cart/add", add)["replayed"] == nil)
        #expect(try a.result("cart/add", add)["replayed"] == true)
        // A resend that also names the version it acted on is still answered as a replay.
        let version = try a.get(cartA).version
        var stale = try #require(add.objectValue)
        stale["expectedVersion"] = .integer(version - 1)
        #expect(try a.result("cart/add", .object(stale))["replayed"] == true)
        let notStoring = try a.call("cart/dismissNotices", ["viewModel": .string(cartA), "idempotencyKey": "x"])
        #expect(notStoring["error"]?["data"]?["parameter"] == "idempotencyKey", "\(notStoring)")
        let reused = try a.call("cart/add", ["viewModel": .string(cartA), "productId": "p-0004", "quantity": 1, "idempotencyKey": "add-1"])
        #expect(reused["error"]?["data"]?["reason"] == "idempotencyKeyReused", "\(reused)")
        let checkout = try a.result("cart/checkout", ["viewModel": .string(cartA), "idempotencyKey": "pay-1"])
        let orderId = try #require(checkout["orderId"])

        // Another server on the file, then the same one restarted: the keys are in the store.
        let (_, b) = try started(["--database", path])
        try b.resume(account)
        let cartB = try loaded(b, "cart")
        let again = try b.result("cart/checkout", ["viewModel": .string(cartB), "idempotencyKey": "pay-1"])
        #expect(again["replayed"] == true)
        #expect(again["orderId"] == orderId)
        first.closeInput()
        #expect(try first.waitForExit() == 0)
        let (_, restarted) = try started(["--database", path])
        try restarted.resume(account)
        let cart = try loaded(restarted, "cart")
        #expect(try restarted.result("cart/add", ["viewModel": .string(cart), "productId": "p-0003", "quantity": 2, "idempotencyKey": "add-1"])["replayed"] == true)
        let dashboard = try loaded(restarted, "dashboard")
        #expect(try restarted.get(dashboard).state["recentOrders"]?["items"]?.arrayValue?.count == 1)
        #expect(try restarted.get(cart).state["lines"] == [])
    }

    @Test func aCheckoutWaitingForAnotherProcesssWriteLockShowsSubmittingAsItWaits() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (_, client) = try started(["--database", path])
        _ = try client.signUp(email: "waits@example.com")
        let cart = try loaded(client, "cart")
        _ = try client.result("cart/add", ["viewModel": .string(cart), "productId": "p-0004", "quantity": 1])
        // Another process's transaction holds the file's write lock (this test's connection, begun and not ended).
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let other = try DatabaseQueue(path: path, configuration: configuration)
        try other.inDatabase { try $0.execute(sql: "BEGIN IMMEDIATE") }
        let checkout = try client.send([("cart/checkout", ["viewModel": .string(cart)])])[0]
        // The server waits for the lock: the state it shows meanwhile is sent, before the answer.
        try client.waitUntil(cart) { $0["checkoutPhase"] == "submitting" }
        #expect(client.takeResponse(checkout) == nil, "answered before the lock was released")
        try other.inDatabase { try $0.execute(sql: "ROLLBACK") }
        let answer = try client.response(to: checkout)
        #expect(answer["result"]?["orderId"] != nil, "\(answer)")
        #expect(client.mirrors[cart]?.state["checkoutPhase"] == "succeeded")
        #expect(client.mirrors[cart]?.state["lines"] == [])
    }

    @Test func twoServersOnOneFileShowEachOthersChangesWithoutWriting() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (_, a) = try started(["--database", path])
        let (_, b) = try started(["--database", path])
        // Both servers are sessions of one account: one cart.
        try b.resume(try a.signUp(email: "two-servers@example.com"))
        let cartA = try loaded(a, "cart")
        let cartB = try loaded(b, "cart")
        let detailB = try loaded(b, "productDetail", args: ["productId": "p-0004"])
        _ = try a.result("cart/add", ["viewModel": .string(cartA), "productId": "p-0004", "quantity": 2])
        try b.waitUntil(cartB) { $0["totals"]?["itemCount"] == 2 }
        try b.waitUntil(detailB) { $0["inCart"] == 2 }
        _ = try a.result("cart/checkout", ["viewModel": .string(cartA)])
        try b.waitUntil(cartB) { $0["lines"] == [] }
        // B's checkout of the cart it shows now is refused as empty, not as anything else.
        let empty = try b.call("cart/checkout", ["viewModel": .string(cartB)])
        #expect(empty["error"]?["data"]?["reason"] == "emptyCart", "\(empty)")
        for (client, handle) in [(a, cartA), (b, cartB), (b, detailB)] {
            #expect(try client.get(handle).state == client.mirrors[handle]?.state)
        }
    }
}
