import JSON
import JSONRPC
import Testing

@MainActor @Suite struct ConnectionBatchTests {
    /// `(id, error code or nil)` of each response in a batch answer, in order.
    func summary(_ answer: JSONValue?) -> [String] {
        (answer?.arrayValue ?? []).map { "\($0["id"] ?? "missing")" + (errorCode(of: $0).map { " \($0)" } ?? " ok") }
    }

    @Test func answersAMixedBatchWithOneArrayInOrder() async {
        let harness = ConnectionHarness()
        let answer = await harness.answer(to: """
            [{"jsonrpc":"2.0","id":1,"method":"ping"},
             {"jsonrpc":"2.0","method":"ping"},
             42,
             {"jsonrpc":"2.0","id":2,"method":"nope"},
             {"jsonrpc":"2.0","id":"x","method":"ping","params":1},
             [{"jsonrpc":"2.0","id":3,"method":"ping"}],
             {"jsonrpc":"2.0","id":4,"method":"ping"}]
            """)
        #expect(summary(answer) == ["1 ok", "null -32600", "2 -32601", "\"x\" -32600", "null -32600", "4 ok"])
        #expect(answer?.arrayValue?.first == result([:], id: 1))
    }

    @Test func answersABatchOfNotificationsWithNothing() async {
        let harness = ConnectionHarness()
        harness.send(#"[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method":"initialized"},{"jsonrpc":"2.0","method":"nope"}]"#)
        await harness.settle()
        #expect(harness.takeOutput().isEmpty)
    }

    @Test func answersAnEmptyBatchWithOneError() async {
        let answer = await ConnectionHarness().answer(to: "[]")
        #expect(answer == ["jsonrpc": "2.0", "id": nil, "error": ["code": -32600, "message": "Invalid Request: empty batch"]])
    }

    @Test func answersABatchOverTheLimitWithOneErrorAndServesNoneOfIt() async {
        let harness = ConnectionHarness()
        harness.connection.maxBatchLength = 3
        let ping = #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
        let atLimit = await harness.answer(to: "[\(ping),\(ping),\(ping)]")
        #expect(atLimit?.arrayValue?.count == 3)
        let over = await harness.answer(to: "[\(ping),\(ping),\(ping),\(ping)]")
        #expect(over == [
            "jsonrpc": "2.0", "id": nil,
            "error": ["code": -32600, "message": "Invalid Request: batch of 4 messages exceeds the limit of 3"],
        ])
    }

    @Test func waitsForEveryTaskOfABatchBeforeAnsweringIt() async {
        let harness = ConnectionHarness()
        let gate = Gate()
        harness.connection.register(MethodDescription(name: "slow", summary: "Waits.", result: nil), handler: .task { _ in
            await gate.wait()
            return "slow done"
        })
        harness.send(#"[{"jsonrpc":"2.0","id":1,"method":"slow"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"slow"}]"#)
        await harness.yield { gate.waiting == 2 }
        #expect(harness.takeOutput().isEmpty)
        gate.open()
        await harness.settle()
        let output = harness.takeOutput()
        #expect(output.count == 1)
        // JSON-RPC lets a batch's responses come in any order; tasks finish in whatever order they resume.
        #expect(summary(output.first).sorted() == ["1 ok", "2 ok", "3 ok"])
    }

    @Test func answersInvalidMembersInTheSameArrayAsTaskResults() async {
        let harness = ConnectionHarness()
        harness.connection.register(MethodDescription(name: "later", summary: "Answers from a task.", result: nil), handler: .task { _ in "ok" })
        harness.send(#"[{"jsonrpc":"2.0","id":1,"method":"later"},42]"#)
        await harness.settle()
        let output = harness.takeOutput()
        #expect(output.count == 1, "one array, not \(output)")
        #expect(summary(output.first) == ["null -32600", "1 ok"])
    }

    @Test func makesTheResultsThatShowStateWhenTheArrayIsWritten() async {
        let harness = ConnectionHarness()
        let count = Names([])  // the names added so far stand for the state
        harness.connection.register(MethodDescription(name: "add", summary: "Adds a name later.", result: nil), handler: .task { request in
            await Task.yield()
            count.insert("\(request.id.map { "\($0)" } ?? "")")
            return "added"
        })
        harness.connection.register(MethodDescription(name: "count", summary: "Counts the names.", result: nil), handler: .immediateSnapshot { _ in
            { .integer(Int64(count.count)) }
        })
        // Alone: made at once.
        #expect(await harness.answer(to: #"{"jsonrpc":"2.0","id":1,"method":"count"}"#) == result(0, id: 1))
        // In a batch: made when the array is written, after the add that answered last.
        let answer = await harness.answer(to: #"[{"jsonrpc":"2.0","id":2,"method":"count"},{"jsonrpc":"2.0","id":3,"method":"add"}]"#)
        #expect(answer?.arrayValue?.first { $0["id"] == 2 } == result(1, id: 2))
    }
}
