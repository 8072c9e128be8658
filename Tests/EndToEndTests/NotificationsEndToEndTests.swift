import JSON
import Testing

/// The inbox over real pipes, with two servers on one database file and one account signed in on both: a
/// checkout in one appears in the other's open inbox, a read in one shows in the other, and the inbox
/// survives a restart. A guest cannot open an inbox.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct NotificationsEndToEndTests {
    func started(_ path: String) throws -> (ServerProcess, MirroringClient) {
        let server = try ServerProcess(["--database", path, "--framing", "ndjson"], timeoutSeconds: 60)
        let client = MirroringClient(server)
        try client.initialize()
        return (server, client)
    }

    func loaded(_ client: MirroringClient, _ type: String) throws -> String {
        let handle = try client.open(type)
        try client.waitUntil(handle) { $0["phase"] == "loaded" }
        return handle
    }

    @Test func aCheckoutInOneServerAppearsInTheOthersInboxAndReadsShowInBothAndSurviveARestart() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (_, a) = try started(path)
        let (serverB, b) = try started(path)

        let guestOpen = try a.call("viewModel/open", ["type": "notifications"])
        #expect(guestOpen["error"]?["code"] == -32001 && guestOpen["error"]?["data"]?["reason"] == "signInRequired", "\(guestOpen)")

        let account = try a.signUp(email: "inbox@example.com")
        try b.resume(account)
        let inboxA = try loaded(a, "notifications")
        #expect(a.mirrors[inboxA]?.state["items"] == [])
        #expect(a.mirrors[inboxA]?.state["unreadCount"] == 0)
        #expect(a.mirrors[inboxA]?.state["enabled"] == true)

        // Two checkouts in B: both arrive at the top of A's open inbox, newest first.
        let cartB = try loaded(b, "cart")
        var orderIds: [JSONValue] = []
        for product in ["p-0003", "p-0005"] {
            _ = try b.result("cart/add", ["viewModel": .string(cartB), "productId": .string(product), "quantity": 1])
            let placed = try b.result("cart/checkout", ["viewModel": .string(cartB)])
            orderIds.append(try #require(placed["orderId"] ?? b.mirrors[cartB]?.state["lastOrder"]?["id"]))
        }
        // Bounded by the client's 60 s wait for a message: a guard against a hang, not a figure.
        try a.waitUntil(inboxA) { $0["items"]?.arrayValue?.count == 2 }
        let items = try #require(a.mirrors[inboxA]?.state["items"]?.arrayValue)
        #expect(items.map { $0["orderId"] } == orderIds.reversed())
        #expect(items.allSatisfy { $0["kind"] == "orderPlaced" && $0["isRead"] == false })
        #expect(a.mirrors[inboxA]?.state["unreadCount"] == 2)
        let current = try a.get(inboxA)
        #expect(current.state == a.mirrors[inboxA]?.state && current.version == a.mirrors[inboxA]?.version)

        // B's inbox, opened now, shows the same; markAllRead in A shows there.
        let inboxB = try loaded(b, "notifications")
        #expect(b.mirrors[inboxB]?.state["items"] == .array(items))
        let unknown = try a.call("notifications/markAsRead", ["viewModel": .string(inboxA), "id": "n-999"])
        #expect(unknown["error"]?["code"] == -32001 && unknown["error"]?["data"]?["reason"] == "notificationNotFound", "\(unknown)")
        _ = try a.result("notifications/markAllRead", ["viewModel": .string(inboxA)])
        #expect(a.mirrors[inboxA]?.state["unreadCount"] == 0)
        try b.waitUntil(inboxB) { $0["unreadCount"] == 0 && $0["items"]?.arrayValue?.allSatisfy { $0["isRead"] == true } == true }

        // The inbox survives B's restart.
        _ = try serverB.killAndWait()
        let (_, restarted) = try started(path)
        try restarted.resume(account)
        let again = try loaded(restarted, "notifications")
        let shown = try #require(restarted.mirrors[again]?.state)
        #expect(shown["items"]?.arrayValue?.map { $0["id"] } == items.map { $0["id"] })
        #expect(shown["items"]?.arrayValue?.allSatisfy { $0["isRead"] == true } == true)
        #expect(shown["unreadCount"] == 0 && shown["hasMore"] == false)
    }
}
