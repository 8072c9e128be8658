import JSON
import JSONRPC
import Testing

@MainActor @Suite struct ConnectionLifecycleTests {
    @Test func servesOnlyPingAndDiscoveryBeforeInitialize() async throws {
        let harness = ConnectionHarness(initialized: false)
        harness.connection.register(MethodDescription(name: "cart.get", summary: "Reads.", result: nil), handler: .immediate { _ in [:] })
        #expect(await harness.answer(to: #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#) == result([:], id: 1))
        let discovery = try #require(await harness.answer(to: #"{"jsonrpc":"2.0","id":2,"method":"rpc.discover"}"#))
        #expect(discovery["result"]?["openrpc"] == "1.3.2")
        for method in ["cart.get", "shutdown", "no.such.method"] {
            let answer = await harness.answer(to: #"{"jsonrpc":"2.0","id":3,"method":"\#(method)"}"#)
            #expect(answer == [
                "jsonrpc": "2.0", "id": 3,
                "error": ["code": -32002, "message": #"Server not initialized: send "initialize" first"#],
            ], "\(method)")
        }
        #expect(harness.connection.phase == .uninitialized)
    }

    @Test func initializeAnswersWhoTheServerIsAndWhatItCanDo() async {
        let harness = ConnectionHarness(initialized: false)
        var clientName: String?
        harness.connection.configureInitialize(capabilities: ["stateUpdates": ["patch": true]]) { params in
            clientName = params.clientInfo?.name
        }
        let answer = await harness.answer(to: #"""
            {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2026-01-01","clientInfo":{"name":"tester","version":"1"},"capabilities":{},"processId":42}}
            """#)
        #expect(answer == result([
            "protocolVersion": "2026-01-01",
            "serverInfo": ["name": "storefront-test", "version": "9.8.7"],
            "capabilities": ["stateUpdates": ["patch": true]],
        ], id: 0))
        #expect(clientName == "tester")
        #expect(harness.connection.phase == .running)
    }

    @Test func initializeWithoutParamsIsAccepted() async {
        let harness = ConnectionHarness(initialized: false)
        let answer = await harness.answer(to: #"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#)
        #expect(answer?["result"]?["capabilities"] == [:])
        #expect(harness.connection.phase == .running)
    }

    @Test func refusedInitializeParamsLeaveTheServerUninitialized() async {
        let harness = ConnectionHarness(initialized: false)
        harness.connection.configureInitialize(capabilities: [:]) { params in
            guard params.protocolVersion == "2026-01-01" else {
                throw RPCError(code: .invalidParams, message: "unsupported protocol version")
            }
        }
        let badType = await harness.answer(to: #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":5}}"#)
        #expect(errorCode(of: badType) == -32602)
        #expect(badType?["error"]?["data"]?["parameter"] == "clientInfo")
        let refused = await harness.answer(to: #"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999"}}"#)
        #expect(refused == ["jsonrpc": "2.0", "id": 2, "error": ["code": -32602, "message": "unsupported protocol version"]])
        #expect(harness.connection.phase == .uninitialized)
    }

    @Test func refusesASecondInitialize() async {
        let harness = ConnectionHarness()
        let answer = await harness.answer(to: #"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#)
        #expect(errorCode(of: answer) == -32600)
        #expect(answer?["id"] == 2)
        #expect(harness.connection.phase == .running)
    }

    @Test func refusesEverythingButExitAfterShutdown() async {
        let harness = ConnectionHarness()
        #expect(await harness.answer(to: #"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#) == result(nil, id: 1))
        #expect(harness.connection.phase == .shuttingDown)
        for method in ["ping", "initialize", "shutdown", "rpc.discover", "no.such.method"] {
            let answer = await harness.answer(to: #"{"jsonrpc":"2.0","id":"after","method":"\#(method)"}"#)
            #expect(answer == [
                "jsonrpc": "2.0", "id": "after",
                "error": ["code": -32600, "message": #"Invalid Request: the server is shutting down; only "exit" is accepted"#],
            ], "\(method)")
        }
        #expect(harness.connection.exitCode == nil)
        harness.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(harness.connection.exitCode == 0)
        #expect(harness.takeOutput().isEmpty)
    }

    @Test func exitWithoutShutdownExitsWithOne() {
        let running = ConnectionHarness()
        running.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(running.connection.exitCode == 1)
        let fresh = ConnectionHarness(initialized: false)
        fresh.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(fresh.connection.exitCode == 1)
        #expect(running.takeOutput().isEmpty && fresh.takeOutput().isEmpty)
    }

    @Test func exitReadInTheSameTurnAsShutdownSeesIt() async {
        let harness = ConnectionHarness()
        harness.send(#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#)
        harness.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(harness.connection.exitCode == 0)
        await harness.settle()
        #expect(harness.takeOutput() == [result(nil, id: 1)])
    }

    @Test func shutdownAnswersAfterTheRequestsInFlight() async {
        let harness = ConnectionHarness()
        let gate = Gate()
        harness.connection.register(MethodDescription(name: "slow", summary: "Waits.", result: nil), handler: .task { _ in
            await gate.wait()
            return "slow done"
        })
        harness.send(#"{"jsonrpc":"2.0","id":1,"method":"slow"}"#)
        harness.send(#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#)
        await harness.yield { gate.waiting == 1 }
        #expect(harness.takeOutput().isEmpty)
        gate.open()
        await harness.settle()
        #expect(harness.takeOutput() == [result("slow done", id: 1), result(nil, id: 2)])
    }

    @Test func neverAnswersNotifications() async {
        let harness = ConnectionHarness()
        var notes: [JSONValue?] = []
        harness.connection.onNotification("cart.note") { notes.append($0.params) }
        for text in [
            #"{"jsonrpc":"2.0","method":"ping"}"#,
            #"{"jsonrpc":"2.0","method":"shutdown"}"#,
            #"{"jsonrpc":"2.0","method":"no.such.notification","params":[1]}"#,
            #"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
            #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            #"{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}"#,
            #"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":99}}"#,
            #"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{}}"#,
            #"{"jsonrpc":"2.0","method":"cart.note","params":{"n":1}}"#,
        ] {
            harness.send(text)
        }
        await harness.settle()
        #expect(harness.takeOutput().isEmpty)
        #expect(notes == [["n": 1]])
        #expect(harness.connection.phase == .running)
    }

    @Test func dropsNotificationsBeforeInitialize() {
        let harness = ConnectionHarness(initialized: false)
        var count = 0
        harness.connection.onNotification("cart.note") { _ in count += 1 }
        harness.send(#"{"jsonrpc":"2.0","method":"cart.note"}"#)
        #expect(count == 0)
        harness.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#)
        harness.send(#"{"jsonrpc":"2.0","method":"cart.note"}"#)
        #expect(count == 1)
    }

    @Test func ignoresResponsesFromTheClient() {
        let harness = ConnectionHarness()
        harness.send(#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        harness.send(#"{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"no"}}"#)
        #expect(harness.takeOutput().isEmpty)
    }

    @Test func discoveryListsTheBuiltInAndRegisteredMethods() async throws {
        let harness = ConnectionHarness()
        let before = try #require(await harness.answer(to: #"{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}"#)?["result"])
        #expect(before["openrpc"] == "1.3.2")
        #expect(before["info"] == ["title": "storefront-test", "version": "9.8.7"])
        let names = before["methods"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
        #expect(names == ["$/cancelRequest", "exit", "initialize", "initialized", "ping", "rpc.discover", "shutdown"])
        #expect(before["methods"]?.arrayValue?.allSatisfy { $0["summary"]?.stringValue?.isEmpty == false && $0["params"] != nil } == true)

        harness.connection.register(MethodDescription(name: "cart.add", summary: "Adds.", result: ["name": "Cart"]), handler: .immediate { _ in nil })
        harness.connection.addDiscoverMembers(["components": ["schemas": [:]]])
        let after = try #require(await harness.answer(to: #"{"jsonrpc":"2.0","id":2,"method":"rpc.discover"}"#)?["result"])
        #expect(after["methods"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["$/cancelRequest", "cart.add", "exit", "initialize", "initialized", "ping", "rpc.discover", "shutdown"])
        #expect(after["components"] == ["schemas": [:]])
    }

    @Test func sendsNotificationsThroughTheOutbox() {
        let harness = ConnectionHarness()
        harness.connection.notify("state/patch", params: ["version": 2])
        #expect(harness.takeOutput() == [["jsonrpc": "2.0", "method": "state/patch", "params": ["version": 2]]])
    }
}
