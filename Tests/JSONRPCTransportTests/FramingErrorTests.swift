import JSON
import JSONRPC
import JSONRPCTransport
import Logging
import Testing

@Suite struct FramingErrorTests {
    @Test func aMessageOverTheLimitIsAnInvalidRequestAndEverythingElseAParseError() {
        #expect(FramingError.messageTooLarge(limit: 100).rpcError
            == .invalidRequest("message exceeds the limit of 100 bytes and was skipped"))
        #expect(FramingError.invalidHeader("no Content-Length header").rpcError
            == .parseError("invalid Content-Length header block: no Content-Length header"))
        #expect(FramingError.unexpectedBytes(count: 3).rpcError
            == .parseError("skipped 3 bytes that are not a Content-Length header"))
        #expect(FramingError.truncated(received: 4, expected: 10).rpcError
            == .parseError("the input ended after 4 of the 10 bytes of a message"))
    }

    @MainActor @Test func theConnectionAnswersEachWithANullID() throws {
        let outbox = Outbox()
        let connection = Connection(
            identity: ServerIdentity(name: "test", version: "1", protocolVersion: "1"), outbox: outbox,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        connection.receive(framingError: FramingError.messageTooLarge(limit: 100))
        connection.receive(framingError: FramingError.unexpectedBytes(count: 3))
        let answers = try outbox.pending.split(separator: 0x0A).map { try JSONValue(parsing: Array($0)) }
        #expect(answers == [
            ["jsonrpc": "2.0", "id": .null, "error": ["code": -32600, "message": "Invalid Request: message exceeds the limit of 100 bytes and was skipped"]],
            ["jsonrpc": "2.0", "id": .null, "error": ["code": -32700, "message": "Parse error: skipped 3 bytes that are not a Content-Length header"]],
        ])
    }
}
