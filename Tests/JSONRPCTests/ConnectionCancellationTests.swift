import JSON
import JSONRPC
import Testing

@MainActor @Suite struct ConnectionCancellationTests {
    /// A connection with `wait`, which sleeps until cancelled, and `gated`, which ignores cancellation.
    func makeHarness(gate: Gate = Gate()) -> ConnectionHarness {
        let harness = ConnectionHarness()
        harness.connection.register(MethodDescription(name: "wait", summary: "Sleeps until cancelled.", result: nil), handler: .task { _ in
            try await Task.sleep(for: .seconds(3600))
            return "woke up"
        })
        harness.connection.register(MethodDescription(name: "gated", summary: "Waits for the gate.", result: nil), handler: .task { _ in
            await gate.wait()
            return "gate opened"
        })
        return harness
    }

    @Test(arguments: ["7", #""req-7""#])
    func cancelRequestEndsTheTaskWithRequestCancelled(_ idText: String) async throws {
        let harness = makeHarness()
        harness.send(#"{"jsonrpc":"2.0","id":\#(idText),"method":"wait"}"#)
        #expect(harness.connection.inFlightCount == 1)
        await harness.yieldToTasks()
        #expect(harness.takeOutput().isEmpty)
        harness.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":\#(idText)}}"#)
        await harness.settle()
        #expect(harness.takeOutput() == [[
            "jsonrpc": "2.0", "id": try JSONValue(parsing: idText),
            "error": ["code": -32800, "message": "Request cancelled"],
        ]])
    }

    @Test func theCountOfRequestsInFlightIsReadableFromAnyThread() async {
        let gate = Gate()
        let harness = makeHarness(gate: gate)
        let connection = harness.connection
        let readElsewhere = { await Task.detached { connection.requestsInFlight }.value }
        #expect(await readElsewhere() == 0)
        harness.send(#"{"jsonrpc":"2.0","id":1,"method":"gated"}"#)
        harness.send(#"{"jsonrpc":"2.0","id":2,"method":"gated"}"#)
        harness.send(#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#)  // answered at once: never in flight
        #expect(await readElsewhere() == 2)
        #expect(connection.inFlightCount == 2)
        gate.open()
        await harness.settle()
        #expect(harness.takeOutput().count == 3)
        #expect(await readElsewhere() == 0)
    }

    @Test func cancellingBeforeTheTaskStartsStillAnswersOnce() async {
        let harness = makeHarness()
        harness.send(#"{"jsonrpc":"2.0","id":1,"method":"wait"}"#)
        harness.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        await harness.settle()
        #expect(harness.takeOutput().map(errorCode(of:)) == [-32800])
    }

    @Test func servesPingWhileARequestIsInFlight() async {
        let harness = makeHarness()
        harness.send(#"{"jsonrpc":"2.0","id":1,"method":"wait"}"#)
        harness.send(#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        #expect(harness.takeOutput() == [result([:], id: 2)])
        #expect(harness.connection.inFlightCount == 1)
        harness.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        await harness.settle()
        #expect(harness.takeOutput().map(errorCode(of:)) == [-32800])
    }

    @Test func cancelsOnlyTheNamedRequest() async {
        let harness = makeHarness()
        harness.send(#"{"jsonrpc":"2.0","id":1,"method":"wait"}"#)
        harness.send(#"{"jsonrpc":"2.0","id":"1","method":"wait"}"#)
        harness.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"1"}}"#)
        await harness.yield { harness.connection.inFlightCount == 1 }
        #expect(harness.takeOutput() == [["jsonrpc": "2.0", "id": "1", "error": ["code": -32800, "message": "Request cancelled"]]])
        #expect(harness.connection.inFlightCount == 1)
        harness.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        await harness.settle()
        #expect(harness.takeOutput().map { $0["id"] } == [1])
    }

    @Test func refusesAnIDAlreadyInFlight() async {
        let harness = makeHarness()
        harness.send(#"{"jsonrpc":"2.0","id":5,"method":"wait"}"#)
        harness.send(#"{"jsonrpc":"2.0","id":5,"method":"wait"}"#)
        let refusal = harness.takeOutput()
        #expect(refusal.map(errorCode(of:)) == [-32600])
        #expect(refusal.first?["id"] == 5)
        harness.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":5}}"#)
        await harness.settle()
        #expect(harness.takeOutput().map(errorCode(of:)) == [-32800])
    }

    @Test func aHandlerThatIgnoresCancellationAnswersWithItsResult() async {
        let gate = Gate()
        let harness = makeHarness(gate: gate)
        harness.send(#"{"jsonrpc":"2.0","id":1,"method":"gated"}"#)
        await harness.yield { gate.waiting == 1 }
        harness.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        gate.open()
        await harness.settle()
        #expect(harness.takeOutput() == [result("gate opened", id: 1)])
    }

    @Test func cancellingAFinishedOrUnknownRequestDoesNothing() async {
        let harness = makeHarness()
        #expect(await harness.answer(to: #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#) == result([:], id: 1))
        harness.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        harness.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"unknown"}}"#)
        harness.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":null}}"#)
        await harness.settle()
        #expect(harness.takeOutput().isEmpty)
    }
}
