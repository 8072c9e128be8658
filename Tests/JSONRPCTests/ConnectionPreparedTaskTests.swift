import JSON
import JSONRPC
import Testing

/// `MethodHandler.preparedTask`: checked in the turn that read the request, run as a task afterwards.
@MainActor @Suite struct ConnectionPreparedTaskTests {
    /// A connection whose `name` is a prepared task over `names`: valid while the name is in the set when the
    /// request arrives; its task answers whether the name is still there when it runs.
    func makeHarness(names: Names) -> ConnectionHarness {
        let harness = ConnectionHarness()
        harness.connection.register(MethodDescription(name: "name", summary: "Reads a name.", result: nil), handler: .preparedTask { request in
            guard case .string(let name) = request.params?["name"], names.contains(name) else {
                throw RPCError.invalidParams(parameter: "name", reason: "is not a name")
            }
            return { names.contains(name) ? "still there" : "gone" }
        })
        harness.connection.register(MethodDescription(name: "drop", summary: "Drops a name.", result: nil), handler: .immediate { request in
            if case .string(let name) = request.params?["name"] { names.remove(name) }
            return .null
        })
        return harness
    }

    @Test func theCheckSeesTheRequestAsItArrivesAndTheTaskRunsAfterTheTurn() async {
        let names = Names(["a"])
        let harness = makeHarness(names: names)
        // Read in one turn: the drop runs before the task, but after the check.
        harness.send(#"{"jsonrpc":"2.0","id":1,"method":"name","params":{"name":"a"}}"#)
        harness.send(#"{"jsonrpc":"2.0","id":2,"method":"drop","params":{"name":"a"}}"#)
        harness.send(#"{"jsonrpc":"2.0","id":3,"method":"name","params":{"name":"a"}}"#)
        #expect(harness.connection.inFlightCount == 1)
        await harness.settle()
        let output = harness.takeOutput()
        #expect(output.count == 3)
        #expect(output.first { $0["id"] == 1 }?["result"] == "gone")
        #expect(output.first { $0["id"] == 3 }?["error"]?["code"] == -32602)
    }
}

/// A set of names shared by a test's handlers.
@MainActor final class Names {
    private var names: Set<String>
    init(_ names: Set<String>) { self.names = names }
    func contains(_ name: String) -> Bool { names.contains(name) }
    func remove(_ name: String) { names.remove(name) }
    func insert(_ name: String) { names.insert(name) }
    var count: Int { names.count }
}
