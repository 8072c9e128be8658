import JSON
import Testing

/// Actions a client pipelines take effect in the order it sent them.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct PipelinedOrderTests {
    @Test(arguments: [WireFraming.ndjson, .lsp])
    func cartChangesSentAtOnceApplyInOrder(_ wire: WireFraming) throws {
        let server = try ServerProcess(["--framing", wire == .ndjson ? "ndjson" : "lsp"])
        try server.send([
            #"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"clientInfo":{"name":"order"}}}"#,
            #"{"jsonrpc":"2.0","id":"open","method":"viewModel/open","params":{"type":"cart"}}"#,
        ], framing: wire)
        var messages: [JSONValue] = []
        repeat { messages.append(try server.receive(framing: wire)) } while messages.last?["id"] != "open"
        let cart = try #require(messages.last?["result"]?["viewModel"]?.stringValue)
        // Each setQuantity 0 needs the add just before it; each add needs the line gone again.
        var requests: [String] = []
        for index in 0..<4_000 {
            let product = "p-\(String(10_001 + (index / 2) % 7).dropFirst())"  // p-0001…p-0007, all in stock
            requests.append(index % 2 == 0
                ? #"{"jsonrpc":"2.0","id":\#(index),"method":"cart/add","params":{"viewModel":"\#(cart)","productId":"\#(product)","quantity":1}}"#
                : #"{"jsonrpc":"2.0","id":\#(index),"method":"cart/setQuantity","params":{"viewModel":"\#(cart)","productId":"\#(product)","quantity":0}}"#)
        }
        try server.send(requests, framing: wire)
        var answered: [Int64: JSONValue] = [:]
        while answered.count < requests.count {
            let message = try server.receive(framing: wire)
            guard let id = message["id"]?.integerValue else { continue }
            answered[id] = message
        }
        let failed = answered.filter { $0.value["result"] == nil }.sorted { $0.key < $1.key }
        #expect(failed.isEmpty, "first failure: \(failed.first.map { "\($0.value)" } ?? "")")
    }

    /// The same with an idempotency key on each change, on a file (several readers): a keyed action looks
    /// its key up before it runs, and those lookups end in any order.
    @Test func keyedCartChangesSentAtOnceApplyInOrder() throws {
        let folder = try TemporaryDirectory()
        let server = try ServerProcess(["--framing", "ndjson", "--database", folder.path + "/shop.sqlite"], timeoutSeconds: 60)
        let client = MirroringClient(server)
        try client.initialize()
        let cart = try client.open("cart")
        try client.waitUntil(cart) { $0["phase"] == "loaded" }
        // Unkeyed ones between them must wait for the keyed ones before them too.
        let calls: [(method: String, params: JSONValue)] = (0..<2_000).map { index in
            let product = JSONValue.string("p-\(String(10_001 + (index / 2) % 7).dropFirst())")
            var params: JSONValue = index % 2 == 0
                ? ["viewModel": .string(cart), "productId": product, "quantity": 1]
                : ["viewModel": .string(cart), "productId": product, "quantity": 0]
            if index % 5 != 4 { params = .object(params.objectValue!.merging(["idempotencyKey": .string("order-\(index)")]) { $1 }) }
            return (index % 2 == 0 ? "cart/add" : "cart/setQuantity", params)
        }
        let ids = try client.send(calls)
        let failed = try ids.map { try client.response(to: $0) }.filter { $0["result"] == nil }
        #expect(failed.count == 0, "\(failed.count) of \(ids.count) failed; first: \(failed.first.map { "\($0)" } ?? "")")
    }

    /// A checkout answers the order it placed even when a change sent right after it is applied before
    /// the answer is written (that change starts a new checkout story, which clears `lastOrder`).
    @Test(arguments: [false, true])
    func aCheckoutFollowedAtOnceByChangesAnswersItsOrder(keyed: Bool) throws {
        let shop = try SignedInCart(email: "pipelined@example.com")
        let (client, cart, stock) = (shop.client, shop.cart, shop.stock)
        let products = stock.sorted { $0.value > $1.value }.prefix(4).map { JSONValue.string($0.key) }
        var withoutOrder: [JSONValue] = []
        var key = 0
        func params(_ members: [String: JSONValue]) -> JSONValue {
            key += 1
            return .object(members.merging(keyed ? ["viewModel": .string(cart), "idempotencyKey": .string("k\(key)")] : ["viewModel": .string(cart)]) { $1 })
        }
        let rounds = 100
        for round in 0..<rounds {
            _ = try client.result("cart/add", params(["productId": products[0], "quantity": 1]))
            let ids = try client.send([("cart/checkout", params([:]))] + products.dropFirst().map { product in
                ("cart/add", params(["productId": product, "quantity": 1]))
            })
            let answers = try ids.map { try client.response(to: $0) }
            try #require(answers.allSatisfy { $0["result"] != nil }, "round \(round): \(answers)")
            if answers[0]["result"]?["orderId"] == nil { withoutOrder.append(answers[0]) }
            _ = try client.result("cart/clear", params([:]))
        }
        #expect(withoutOrder.count == 0, "\(withoutOrder.count) of \(rounds) checkouts answered without their order, e.g. \(withoutOrder.first ?? .null)")
    }

    /// A checkout sent right after adds, before their answers, checks out the cart with them; an add sent
    /// right after the checkout goes to the cart after the order.
    @Test(arguments: [false, true])
    func aCheckoutSentRightAfterAddsChecksOutTheCartWithThem(keyed: Bool) throws {
        let shop = try SignedInCart(email: "add-then-checkout@example.com")
        let (folder, client, account, cart, stock) = (shop.folder, shop.client, shop.account, shop.cart, shop.stock)
        let products = stock.sorted { $0.value > $1.value }.prefix(3).map { JSONValue.string($0.key) }
        var key = 0
        func params(_ members: [String: JSONValue]) -> JSONValue {
            key += 1
            return .object(members.merging(keyed ? ["viewModel": .string(cart), "idempotencyKey": .string("k\(key)")] : ["viewModel": .string(cart)]) { $1 })
        }
        var failures: [String] = []
        for round in 0..<50 {
            let ids = try client.send(
                products.dropLast().map { ("cart/add", params(["productId": $0, "quantity": 1])) }
                    + [("cart/checkout", params([:])), ("cart/add", params(["productId": products[2], "quantity": 1]))])
            let answers = try ids.map { try client.response(to: $0) }
            let checkout = answers[answers.count - 2]
            if checkout["result"]?["orderId"] == nil || answers.last?["result"] == nil {
                failures.append("round \(round): \(checkout), then \(answers.last ?? .null)")
            }
            // The add sent after the checkout is the next cart.
            try client.waitUntil(cart) { $0["lines"]?.arrayValue?.compactMap { $0["productId"] } == [products[2]] }
            _ = try client.result("cart/clear", params([:]))
        }
        #expect(failures.isEmpty, "\(failures.count) of 50 rounds failed; first: \(failures.first ?? "")")
        let stored = try StoredShop.read(path: folder.path + "/shop.sqlite", owner: account.owner)
        #expect(stored.orders.count == 50)
        let ordered = Set(products.dropLast().compactMap(\.stringValue))
        #expect(stored.orders.values.allSatisfy { Set($0.lines.keys) == ordered && $0.lines.values.allSatisfy { $0 == 1 } && $0.isConsistent })
    }

    /// The same across screens: adds on two product pages sent right before the cart's checkout are in
    /// the order; an add on a third page sent right after it goes to the next cart.
    @Test func aCheckoutSentRightAfterProductPageAddsChecksOutTheCartWithThem() throws {
        let shop = try SignedInCart(email: "pages-then-checkout@example.com")
        let (folder, client, account, cart, stock) = (shop.folder, shop.client, shop.account, shop.cart, shop.stock)
        let products = stock.sorted { $0.value > $1.value }.prefix(3).map(\.key)
        var pages: [String] = []
        for product in products {
            let page = try client.open("productDetail", args: ["productId": .string(product)])
            try client.waitUntil(page) { $0["phase"] == "loaded" }
            pages.append(page)
        }
        var failures: [String] = []
        for round in 0..<50 {
            let ids = try client.send([
                ("productDetail/addToCart", ["viewModel": .string(pages[0])]),
                ("productDetail/addToCart", ["viewModel": .string(pages[1])]),
                ("cart/checkout", ["viewModel": .string(cart)]),
                ("productDetail/addToCart", ["viewModel": .string(pages[2])]),
            ])
            let answers = try ids.map { try client.response(to: $0) }
            if answers[2]["result"]?["orderId"] == nil || answers.contains(where: { $0["result"] == nil }) {
                failures.append("round \(round): \(answers)")
            }
            try client.waitUntil(cart) { $0["lines"]?.arrayValue?.compactMap { $0["productId"]?.stringValue } == [products[2]] }
            _ = try client.result("cart/clear", ["viewModel": .string(cart)])
        }
        #expect(failures.isEmpty, "\(failures.count) of 50 rounds failed; first: \(failures.first ?? "")")
        let stored = try StoredShop.read(path: folder.path + "/shop.sqlite", owner: account.owner)
        #expect(stored.orders.count == 50)
        #expect(stored.orders.values.allSatisfy { Set($0.lines.keys) == Set(products.prefix(2)) && $0.lines.values.allSatisfy { $0 == 1 } && $0.isConsistent })
    }

    /// Checkouts are taken in order too: `add, checkout, add, checkout, checkout` in one write places two
    /// orders, each with its add, and the third checkout finds the cart empty, however fast each ran.
    @Test func checkoutsSentTogetherAreTakenInOrder() throws {
        let shop = try SignedInCart(email: "two-checkouts@example.com")
        let (folder, client, account, cart, stock) = (shop.folder, shop.client, shop.account, shop.cart, shop.stock)
        let products = stock.sorted { $0.value > $1.value }.prefix(2).map(\.key)
        let params: JSONValue = ["viewModel": .string(cart)]
        func add(_ product: String) -> (String, JSONValue) {
            ("cart/add", ["viewModel": .string(cart), "productId": .string(product), "quantity": 1])
        }
        var failures: [String] = []
        for round in 0..<30 {
            let ids = try client.send([add(products[0]), ("cart/checkout", params), add(products[1]), ("cart/checkout", params), ("cart/checkout", params)])
            let answers = try ids.map { try client.response(to: $0) }
            if answers[1]["result"]?["orderId"] == nil || answers[3]["result"]?["orderId"] == nil
                || answers[4]["error"]?["data"]?["reason"] != "emptyCart" {
                failures.append("round \(round): \(answers)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of 30 rounds failed; first: \(failures.first ?? "")")
        let stored = try StoredShop.read(path: folder.path + "/shop.sqlite", owner: account.owner)
        #expect(stored.orders.count == 60)
        #expect(stored.orders.values.filter { $0.lines == [products[0]: 1] }.count == 30)
        #expect(stored.orders.values.filter { $0.lines == [products[1]: 1] }.count == 30)
    }

    /// A keyed checkout resent before its first attempt answered (a client that timed out and retried)
    /// waits for it and answers its order, not `emptyCart`.
    @Test func aKeyedCheckoutResentWhileItRunsAnswersTheSameOrder() throws {
        let shop = try SignedInCart(email: "resent-checkout@example.com")
        let (folder, client, account, cart, stock) = (shop.folder, shop.client, shop.account, shop.cart, shop.stock)
        let product = try #require(stock.max { $0.value < $1.value }?.key)
        for round in 0..<20 {
            let checkout: JSONValue = ["viewModel": .string(cart), "idempotencyKey": .string("checkout-\(round)")]
            let ids = try client.send([
                ("cart/add", ["viewModel": .string(cart), "productId": .string(product), "quantity": 1]),
                ("cart/checkout", checkout), ("cart/checkout", checkout),
            ])
            let answers = try ids.map { try client.response(to: $0) }
            let first = answers[1]["result"]?["orderId"], again = answers[2]["result"]?["orderId"]
            #expect(first != nil && first == again, "round \(round): \(answers)")
        }
        #expect(try StoredShop.read(path: folder.path + "/shop.sqlite", owner: account.owner).orders.count == 20)
    }
}

/// A server on a new database file, signed into a new account (a guest cannot check out), with its cart
/// open and loaded, and the stock of every product as stored.
@MainActor
private struct SignedInCart {
    let folder: TemporaryDirectory
    let server: ServerProcess
    let client: MirroringClient
    let account: SignedInAccount
    let cart: String
    let stock: [String: Int]

    init(email: String) throws {
        folder = try TemporaryDirectory()
        server = try ServerProcess(["--framing", "ndjson", "--database", folder.path + "/shop.sqlite"], timeoutSeconds: 60)
        client = MirroringClient(server)
        try client.initialize()
        account = try client.signUp(email: email)
        cart = try client.open("cart")
        try client.waitUntil(cart) { $0["phase"] == "loaded" }
        stock = try StoredShop.read(path: folder.path + "/shop.sqlite", owner: account.owner).stock
    }
}
