import JSON
import Testing

/// What a front-end developer runs into, over real pipes: failed screens say what is true and can be
/// retried, faults reach the service they name, and the state never contradicts itself.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct FrontEndEdgeTests {
    /// A started, initialized server and its mirroring client.
    func started(_ arguments: [String] = []) throws -> (ServerProcess, MirroringClient) {
        let server = try ServerProcess(["--framing", "ndjson"] + arguments, timeoutSeconds: 60)
        let client = MirroringClient(server)
        try client.initialize()
        return (server, client)
    }

    func reason(of answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    @Test func aProductPageThatFailedSaysWhyAndNotStillLoading() throws {
        let (_, client) = try started()
        let detail = try client.open("productDetail", args: ["productId": "p-9999"])
        try client.waitUntil(detail) { $0["phase"] == "failed" }
        let answer = try client.call("productDetail/incrementQuantity", ["viewModel": .string(detail)])
        #expect(reason(of: answer) == "productNotFound")
        #expect(answer["error"]?["message"]?.stringValue?.contains("Still loading") == false)
        // The retry is there, and answers (the product still does not exist).
        #expect(try client.result("productDetail/refresh", ["viewModel": .string(detail)])["version"] != nil)
        #expect(try client.get(detail).state["phase"] == "failed")
    }

    @Test func aFavouritesOutageShowsTheProductWithItsFavouriteMarkUnknown() throws {
        let (_, client) = try started(["--faults", "favorites:failure-rate=1"])
        let detail = try client.open("productDetail", args: ["productId": "p-0001"])
        try client.waitUntil(detail) { $0["phase"] != "loading" }
        let state = try client.get(detail).state
        #expect(state["phase"] == "loaded")
        #expect(state["product"]?["id"] == "p-0001")
        #expect(state["isFavorite"] == .null)
        #expect(state["canToggleFavorite"] == false)
        #expect(state["error"]?["retryable"] == true)
        let toggle = try client.call("productDetail/toggleFavorite", ["viewModel": .string(detail)])
        #expect(reason(of: toggle) == "loadFailed")
    }

    @Test func anOrdersOutageFailsTheCheckoutAndPlacesNoOrder() throws {
        let (_, client) = try started(["--faults", "orders:failure-rate=1"])
        // Signed in, so that the checkout reaches the orders service (a guest's is refused before it).
        _ = try client.signUp(email: "outage@example.com")
        let cart = try client.open("cart")
        try client.waitUntil(cart) { $0["phase"] == "loaded" }
        _ = try client.result("cart/add", ["viewModel": .string(cart), "productId": "p-0001", "quantity": 1])
        _ = try client.result("cart/checkout", ["viewModel": .string(cart)])
        let state = try client.get(cart).state
        #expect(state["checkoutPhase"] == "failed")
        #expect(state["checkoutError"]?["message"]?.stringValue?.contains("orders") == true)
        #expect(state["lastOrder"] == .null)
        #expect(state["totals"]?["itemCount"] == 1)
    }

    @Test func aFaultSpecNamingNoServiceIsRefusedAtStart() throws {
        let server = try ServerProcess(["--faults", "pricing:latency=3s,failure-rate=1"])
        #expect(try server.waitForExit() != 0)
        #expect(server.errorText.contains("Unknown service \"pricing\""))
        #expect(server.errorText.contains("catalog, favorites, cart, orders, recommendations"))
    }

    @Test func aSimulationSeedTheWireCannotCarryIsRefusedAtStart() throws {
        let server = try ServerProcess(["--simulate-market", "5", "--simulate-seed", "9223372036854775808"])
        #expect(try server.waitForExit() != 0)
        #expect(server.errorText.contains("--simulate-seed must be at most 9223372036854775807"), "\(server.errorText)")
    }

    @Test func aDatabaseThatCannotBeOpenedIsNamedWithItsMissingFolder() throws {
        let server = try ServerProcess(["--database", "/nonexistent/storefront-test/x.sqlite"])
        #expect(try server.waitForExit() != 0)
        #expect(server.errorText.contains("/nonexistent/storefront-test/x.sqlite"))
        #expect(server.errorText.contains("the folder /nonexistent/storefront-test does not exist"))
    }

    @Test func anUnknownSortListsTheSortsThereAre() throws {
        let (_, client) = try started()
        let catalog = try client.open("catalog")
        let answer = try client.call("catalog/setSort", ["viewModel": .string(catalog), "sort": "rating"])
        #expect(answer["error"]?["code"] == -32602)
        #expect(answer["error"]?["data"]?["parameter"] == "sort")
        #expect(answer["error"]?["data"]?["reason"] == #"must be one of name, price, newest, not "rating""#)
    }

    @Test func anotherCatalogRefillsAfterADeletionAndTheCartSaysWhichLineWent() throws {
        let (_, client) = try started()
        let acting = try client.open("catalog")
        let other = try client.open("catalog")
        let cart = try client.open("cart")
        for handle in [acting, other, cart] { try client.waitUntil(handle) { $0["phase"] == "loaded" } }
        let listed = try #require(client.get(acting).state["products"]?.arrayValue).compactMap { $0["id"]?.stringValue }
        try #require(listed.count == 20)
        _ = try client.result("cart/add", ["viewModel": .string(cart), "productId": .string(listed[0]), "quantity": 1])
        for id in listed.prefix(2) {
            _ = try client.result("catalog/toggleSelection", ["viewModel": .string(acting), "productId": .string(id)])
        }
        _ = try client.result("catalog/deleteSelected", ["viewModel": .string(acting)])

        let actingProducts = try client.get(acting).state["products"]
        #expect(actingProducts?.arrayValue?.count == 20)
        try client.waitUntil(other) { $0["products"] == actingProducts }
        let notices = try #require(client.get(cart).state["notices"]?.arrayValue)
        #expect(notices.count == 1)
        #expect(notices.first?["productId"] == .string(listed[0]))
        #expect(notices.first?["reason"] == "productDeleted")
    }

    @Test func canAddToCartCountsWhatTheCartHoldsAndACheckoutStoryEndsWithTheNextChange() throws {
        let (_, client) = try started()
        // Signed in: a guest cannot check out.
        _ = try client.signUp(email: "story@example.com")
        let detail = try client.open("productDetail", args: ["productId": "p-0001"])
        let cart = try client.open("cart")
        try client.waitUntil(detail) { $0["phase"] == "loaded" }
        try client.waitUntil(cart) { $0["phase"] == "loaded" }
        let most = try #require(client.get(detail).state["maxQuantity"]?.integerValue)
        try #require(most >= 1)
        _ = try client.result("cart/add", ["viewModel": .string(cart), "productId": "p-0001", "quantity": .integer(most)])
        let full = try client.get(detail).state
        #expect(full["inCart"] == .integer(most))
        #expect(full["maxQuantity"] == 0)
        #expect(full["canAddToCart"] == false)

        _ = try client.result("cart/checkout", ["viewModel": .string(cart)])
        #expect(try client.get(cart).state["checkoutPhase"] == "succeeded")
        _ = try client.result("cart/add", ["viewModel": .string(cart), "productId": "p-0002", "quantity": 1])
        let after = try client.get(cart).state
        #expect(after["checkoutPhase"] == "idle")
        #expect(after["lastOrder"] == .null)
    }

    @Test func aProductFormShowsWhatItRefusesAndCreatesOnce() throws {
        let (_, client) = try started()
        let form = try client.open("productForm")
        try client.waitUntil(form) { $0["phase"] == "loaded" }
        let untouched = try client.call("productForm/submit", ["viewModel": .string(form)])
        #expect(reason(of: untouched) == "validationFailed")
        #expect(try client.get(form).state["errors"] == untouched["error"]?["data"]?["details"])

        let fields: [(String, String)] = [
            ("name", String(repeating: "n", count: 500)), ("price", "12.50"), ("category", "home"),
        ]
        for (field, value) in fields {
            _ = try client.result("productForm/setField", ["viewModel": .string(form), "field": .string(field), "value": .string(value)])
        }
        #expect(try client.get(form).state["errors"]?["name"] == "Name must be at most 120 characters.")
        _ = try client.result("productForm/setField", ["viewModel": .string(form), "field": "name", "value": "Enamel kettle"])
        let created = try client.result("productForm/submit", ["viewModel": .string(form)])
        #expect(created["version"] != nil)
        let again = try client.call("productForm/submit", ["viewModel": .string(form)])
        #expect(reason(of: again) == "alreadySubmitted")
    }
}
