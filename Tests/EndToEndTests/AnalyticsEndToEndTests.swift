import GRDB
import JSON
import Testing

/// Analytics over real pipes and a database file: what a server records is stored by the time it has
/// exited, another server's trending sees it, and a store that cannot take analytics fails no action.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct AnalyticsEndToEndTests {
    func started(_ path: String) throws -> (ServerProcess, MirroringClient) {
        let server = try ServerProcess(["--database", path, "--framing", "ndjson"], timeoutSeconds: 60)
        let client = MirroringClient(server)
        try client.initialize()
        return (server, client)
    }

    /// Opens `productDetail` of `productId`, waits for its load, and returns the handle.
    func openedProduct(_ client: MirroringClient, _ productId: String) throws -> String {
        let handle = try client.open("productDetail", args: ["productId": .string(productId)])
        try client.waitUntil(handle) { $0["phase"] == "loaded" }
        return handle
    }

    func storedEvents(_ path: String) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: path, configuration: configuration).read { db in
            try Row.fetchAll(db, sql: "SELECT kind, productId FROM analytics_event ORDER BY seq").map { row in
                "\(row[0] as String) \(row[1] as String? ?? "-")"
            }
        }
    }

    @Test func eventsAreStoredByExitAndTrendInAnotherServer() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (server, client) = try started(path)
        let detail = try openedProduct(client, "p-0003")
        _ = try client.result("productDetail/incrementQuantity", ["viewModel": .string(detail)])
        _ = try client.result("productDetail/addToCart", ["viewModel": .string(detail)])
        server.closeInput()
        _ = try server.receiveToEnd(framing: .ndjson)
        #expect(try server.waitForExit() == 0)

        #expect(try storedEvents(path) == ["productViewed p-0003", "quantityChanged p-0003", "addedToCart p-0003"])

        let (_, other) = try started(path)
        let dashboard = try other.open("dashboard")
        try other.waitUntil(dashboard) { $0["trending"]?["phase"] == "loaded" }
        let items = try #require(other.mirrors[dashboard]?.state["trending"]?["items"]?.arrayValue)
        #expect(items.count == 1)
        #expect(items.first?["product"]?["id"] == "p-0003")
        #expect(items.first?["views"] == 1 && items.first?["cartAdds"] == 1)
    }

    @Test func aStoreThatCannotTakeAnalyticsFailsNoAction() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        do {
            let (server, _) = try started(path)  // creates and migrates the file
            server.closeInput()
            #expect(try server.waitForExit() == 0)
        }
        try DatabaseQueue(path: path).write { try $0.execute(sql: "DROP TABLE analytics_event") }

        let (server, client) = try started(path)
        let detail = try openedProduct(client, "p-0003")
        _ = try client.result("productDetail/incrementQuantity", ["viewModel": .string(detail)])
        _ = try client.result("productDetail/toggleFavorite", ["viewModel": .string(detail)])
        _ = try client.result("productDetail/addToCart", ["viewModel": .string(detail)])
        let cart = try client.open("cart")
        try client.waitUntil(cart) { $0["phase"] == "loaded" }
        _ = try client.result("cart/setQuantity", ["viewModel": .string(cart), "productId": "p-0003", "quantity": 1])
        #expect(client.mirrors[cart]?.state["lines"]?.arrayValue?.count == 1)
        #expect(client.mirrors[detail]?.state["error"] == .null)

        // Trending is the one thing that shows it: its section fails, with the reason, and nothing else does.
        let dashboard = try client.open("dashboard")
        try client.waitUntil(dashboard) { $0["trending"]?["phase"] == "failed" }
        #expect(client.mirrors[dashboard]?.state["trending"]?["error"]?["retryable"] == false)
        server.closeInput()
        _ = try server.receiveToEnd(framing: .ndjson)
        #expect(try server.waitForExit() == 0)
        #expect(server.errorText.contains("could not store analytics events"))
    }
}
