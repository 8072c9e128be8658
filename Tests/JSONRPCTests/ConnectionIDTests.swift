import JSON
import JSONRPC
import Testing

@MainActor @Suite struct ConnectionIDTests {
    nonisolated static let ids: [String] = [
        "0", "1", "-1", "9007199254740993", "9223372036854775807", "-9223372036854775808",
        #""""#, #""abc""#, #""1""#, #""ü😀 日本""#, #""a\"b\\c""#, #""a\u0000b""#, #""\u2028""#,
    ]

    @Test(arguments: ids)
    func echoesTheIDExactly(_ idText: String) async throws {
        let id = try JSONValue(parsing: idText)
        let harness = ConnectionHarness()
        harness.connection.register(MethodDescription(name: "later", summary: "Answers from a task.", result: nil), handler: .task { _ in
            await Task.yield()
            return "ok"
        })
        #expect(await harness.answer(to: #"{"jsonrpc":"2.0","id":\#(idText),"method":"ping"}"#) == result([:], id: id))
        #expect(await harness.answer(to: #"{"jsonrpc":"2.0","id":\#(idText),"method":"later"}"#) == result("ok", id: id))
        #expect(await harness.answer(to: #"{"jsonrpc":"2.0","id":\#(idText),"method":"nope"}"#)?["id"] == id)
        #expect(await harness.answer(to: #"{"jsonrpc":"1.0","id":\#(idText),"method":"ping"}"#)?["id"] == id)
        #expect(await harness.answer(to: #"[{"jsonrpc":"2.0","id":\#(idText),"method":"ping"}]"#) == [result([:], id: id)])
    }

    @Test(arguments: [
        #"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","params":{"n":99999999999999999999}}"#,
        #"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}"#,
    ])
    func anIDThatCannotBeReadExactlyIsAnsweredAsUnreadable(_ message: String) async {
        // Read through doubles (another number, or the id itself, is too large for 64 bits), the id could
        // only be echoed as a neighbouring number, which would answer a request the client never sent.
        let answer = await ConnectionHarness().answer(to: message)
        #expect(errorCode(of: answer) == -32600)
        #expect(answer?["id"] == .null)
    }

    @Test func writesIntegerIDsAsIntegersAndStringIDsAsStrings() {
        let harness = ConnectionHarness()
        harness.send(#"{"jsonrpc":"2.0","id":-42,"method":"ping"}"#)
        harness.send(#"{"jsonrpc":"2.0","id":"-42","method":"ping"}"#)
        let text = String(decoding: harness.outbox.pending, as: UTF8.self)
        #expect(text == "{\"jsonrpc\":\"2.0\",\"id\":-42,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":\"-42\",\"result\":{}}\n")
    }

    @Test func framesOutputTheWayTheOutboxIsSetTo() {
        let harness = ConnectionHarness()
        harness.outbox.framing = .contentLength
        harness.send(#"{"jsonrpc":"2.0","id":"é","method":"ping"}"#)
        let body = #"{"jsonrpc":"2.0","id":"é","result":{}}"#
        #expect(String(decoding: harness.outbox.pending, as: UTF8.self) == "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
    }
}
