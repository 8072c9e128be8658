import JSON
import Testing

/// Malformed JSON and malformed JSON-RPC, in both framings: each is answered as the spec says and the
/// `ping` after it is served.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct HostileInputTests {
    nonisolated static let parseError = -32700
    nonisolated static let invalidRequest = -32600

    nonisolated static let json: [HostileInput] = [
        .message("a cut-off object", #"{"jsonrpc":"2.0","id":1,"method":"#, [.error(parseError, says: "Parse error")]),
        .message("a bare word", "ping", [.error(parseError, says: "invalid token")]),
        .message("single quotes", "{'jsonrpc':'2.0','id':1,'method':'ping'}", [.error(parseError, says: "Parse error")]),
        .message("trailing garbage after a request", ping("1") + " x", [.error(parseError, says: "end of file expected")]),
        .message("two requests in one message", ping("1") + ping("2"), [.error(parseError, says: "end of file expected")]),
        .message("an empty Content-Length body", "", wires: [.lsp], [.error(parseError, says: "Parse error")]),
        HostileInput(name: "blank lines", wires: [.ndjson], bytes: { _ in Array(" \n\t\r\n\n".utf8) }, answers: { _ in [] }),
    ]

    nonisolated static let encoding: [HostileInput] = [
        .message("invalid UTF-8 in a string", Array(#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":""#.utf8) + [0xFF] + Array(#""}}"#.utf8),
                 [.error(parseError, says: "unable to decode byte 0xff")]),
        .message("invalid UTF-8 in a member name", Array(#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{""#.utf8) + [0xC3, 0x28] + Array(#"":1}}"#.utf8),
                 [.error(parseError, says: "unable to decode byte")]),
        .message("an overlong UTF-8 encoding", Array(#"{"jsonrpc":"2.0","id":"#.utf8) + [0x22, 0xC0, 0xAF, 0x22] + Array(#","method":"ping"}"#.utf8),
                 [.error(parseError, says: "unable to decode byte")]),
        .message("a surrogate encoded as UTF-8", Array(#"{"jsonrpc":"2.0","id":"#.utf8) + [0x22, 0xED, 0xA0, 0x80, 0x22] + Array(#","method":"ping"}"#.utf8),
                 [.error(parseError, says: "unable to decode byte")]),
        .message("a lone surrogate escape", #"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#, [.error(parseError, says: "invalid Unicode")]),
        .message("raw non-UTF-8 bytes as a message", [0xFF, 0xFE, 0xFD, 0x80, 0x01], [.error(parseError, says: "Parse error")]),
        .message("a byte order mark before the JSON", [0xEF, 0xBB, 0xBF] + Array(ping("1").utf8), [.error(parseError, says: "invalid token")]),
    ]

    nonisolated static let nul: [HostileInput] = [
        .message("an escaped NUL in a string id is echoed exactly", #"{"jsonrpc":"2.0","id":"a\u0000b","method":"ping"}"#,
                 [.result(id: "a\u{0}b", [:])]),
        .message("an escaped NUL in the method name", #"{"jsonrpc":"2.0","id":1,"method":"ping\u0000"}"#,
                 [.error(-32601, id: 1, says: "Method not found", data: ["method": "ping\u{0}"])]),
        .message("an escaped NUL in a member name", #"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a\u0000":1}}"#,
                 [.error(parseError, says: "NUL byte in object key")]),
        .message("a raw NUL inside a string", Array(#"{"jsonrpc":"2.0","id":"a"#.utf8) + [0] + Array(#"b","method":"ping"}"#.utf8),
                 [.error(parseError, says: "control character 0x0")]),
        .message("a NUL byte as the whole message", [0], [.error(parseError, says: "Parse error")]),
    ]

    nonisolated static let scalars: [HostileInput] = [
        .message("a top-level number", "42", [.error(invalidRequest, says: "must be a JSON object, not integer")]),
        .message("a top-level fraction", "-1.5e3", [.error(invalidRequest, says: "must be a JSON object, not number")]),
        .message("a top-level string", #""ping""#, [.error(invalidRequest, says: "must be a JSON object, not string")]),
        .message("a top-level null", "null", [.error(invalidRequest, says: "must be a JSON object, not null")]),
        .message("a top-level true", "true", [.error(invalidRequest, says: "must be a JSON object, not boolean")]),
    ]

    nonisolated static let versions: [HostileInput] = [
        .message(#"jsonrpc "1.0""#, #"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, [.error(invalidRequest, id: 1, says: #""jsonrpc" must be exactly "2.0""#)]),
        .message("jsonrpc 2 as a number", #"{"jsonrpc":2,"id":1,"method":"ping"}"#, [.error(invalidRequest, id: 1, says: #""jsonrpc" must be exactly "2.0""#)]),
        .message("jsonrpc 2.0 as a number", #"{"jsonrpc":2.0,"id":1,"method":"ping"}"#, [.error(invalidRequest, id: 1, says: #""jsonrpc" must be exactly "2.0""#)]),
        .message("jsonrpc missing", #"{"id":1,"method":"ping"}"#, [.error(invalidRequest, id: 1, says: #""jsonrpc" must be exactly "2.0""#)]),
        .message("jsonrpc missing in a notification", #"{"method":"ping"}"#, [.error(invalidRequest, says: #""jsonrpc" must be exactly "2.0""#)]),
    ]

    nonisolated static let ids: [HostileInput] = [
        .message("an object id", #"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, [.error(invalidRequest, says: #""id" must be an integer or a string, not object"#)]),
        .message("an array id", #"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, [.error(invalidRequest, says: "not array")]),
        .message("a fractional id", #"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, [.error(invalidRequest, says: "not number")]),
        .message("an id written 1.0", #"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#, [.error(invalidRequest, says: "not number")]),
        .message("an id written 1e3", #"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#, [.error(invalidRequest, says: "not number")]),
        .message("a boolean id", #"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, [.error(invalidRequest, says: "not boolean")]),
        .message("a null id", #"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, [.error(invalidRequest, says: "not null")]),
        .message("an id of 2^63", #"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#, [.error(invalidRequest, says: "not number")]),
        .message("an id of 2^63 - 1 is echoed exactly", ping("9223372036854775807"), [.result(id: .integer(.max), [:])]),
        .message("an id of -2^63 is echoed exactly", ping("-9223372036854775808"), [.result(id: .integer(.min), [:])]),
        .message("a 100 KB string id is echoed exactly", ping("\"" + String(repeating: "ü", count: 50_000) + "\""),
                 [.result(id: .string(String(repeating: "ü", count: 50_000)), [:])]),
        .message("an invalid id and an invalid jsonrpc", #"{"jsonrpc":"1.0","id":[],"method":"ping"}"#, [.error(invalidRequest, says: #""id" must be"#)]),
        .message("a duplicated id member: the last one counts", #"{"jsonrpc":"2.0","id":1,"method":"ping","id":2}"#, [.result(id: 2, [:])]),
    ]

    nonisolated static let methods: [HostileInput] = [
        .message("a number as method", #"{"jsonrpc":"2.0","id":1,"method":42}"#, [.error(invalidRequest, id: 1, says: #""method" must be a string, not integer"#)]),
        .message("a null method", #"{"jsonrpc":"2.0","id":1,"method":null}"#, [.error(invalidRequest, id: 1, says: #""method" must be a string, not null"#)]),
        .message("no method", #"{"jsonrpc":"2.0","id":1}"#, [.error(invalidRequest, id: 1, says: #"missing "method""#)]),
        .message("an unknown method", #"{"jsonrpc":"2.0","id":1,"method":"no/such"}"#,
                 [.error(-32601, id: 1, says: "Method not found: no/such", data: ["method": "no/such"])]),
        .message("an empty method name", #"{"jsonrpc":"2.0","id":1,"method":""}"#, [.error(-32601, id: 1, says: "Method not found", data: ["method": ""])]),
        .message("an unknown method before initialize", #"{"jsonrpc":"2.0","id":1,"method":"no/such"}"#, initializes: false,
                 [.error(-32002, id: 1, says: "Server not initialized")]),
        .message("an action before initialize", #"{"jsonrpc":"2.0","id":1,"method":"viewModel/open","params":{"type":"cart"}}"#, initializes: false,
                 [.error(-32002, id: 1, says: "Server not initialized")]),
        .message("an unknown notification", #"{"jsonrpc":"2.0","method":"no/such"}"#, []),
        .message("a known method sent as a notification", #"{"jsonrpc":"2.0","method":"viewModel/open","params":{"type":"cart"}}"#, []),
        .message("a response from the client", #"{"jsonrpc":"2.0","id":5,"result":{}}"#, []),
        .message("an error response from the client", #"{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}}"#, []),
        .message("a second initialize", #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
                 [.error(invalidRequest, id: 1, says: "already initialized")]),
        .message("initialize with params of the wrong shape", #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":["me"]}"#, initializes: false,
                 [.invalidParams(id: 1, parameter: "")]),
        .message("initialize with an unknown state update mode", #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"stateUpdates":"telepathy"}}}"#,
                 initializes: false, [.invalidParams(id: 1, parameter: "capabilities.stateUpdates")]),
        .message("cancelling an id of the wrong type", #"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{}}}"#, []),
    ]

    nonisolated static let params: [HostileInput] = [
        .message("params as a string", #"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#, [.error(invalidRequest, id: 1, says: #""params" must be an object or an array, not string"#)]),
        .message("params null, as LSP clients send for no params", #"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#, [.result(id: 1, [:])]),
        .message("params null for a method with required params", #"{"jsonrpc":"2.0","id":1,"method":"viewModel/open","params":null}"#,
                 [.invalidParams(id: 1, parameter: "type")]),
        .message("params as a number in a notification", #"{"jsonrpc":"2.0","method":"ping","params":5}"#, [.error(invalidRequest, says: "not integer")]),
    ]

    nonisolated static let nesting: [HostileInput] = [
        .message("arrays nested 100 000 deep", String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000),
                 [.error(parseError, says: "nesting deeper than 256 levels")]),
        .message("objects nested 100 000 deep", String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000),
                 [.error(parseError, says: "nesting deeper than 256 levels")]),
        .message("100 000 unclosed brackets", String(repeating: "[", count: 100_000), [.error(parseError, says: "nesting deeper than 256 levels")]),
        .message("params nested 257 levels deep", nestedPing(levels: 257), [.error(parseError, says: "nesting deeper than 256 levels")]),
        .message("params nested exactly 256 levels deep", nestedPing(levels: 256), [.result(id: 1, [:])]),
        .message("a batch nesting 257 levels", "[" + nestedPing(levels: 256) + "]", [.error(parseError, says: "nesting deeper than 256 levels")]),
    ]

    nonisolated static let batches: [HostileInput] = [
        .message("an empty batch", "[]", [.error(invalidRequest, says: "empty batch")]),
        .message("a batch over the limit", "[" + (1...10_001).map { ping("\($0)") }.joined(separator: ",") + "]",
                 [.error(invalidRequest, says: "batch of 10001 messages exceeds the limit of 10000")]),
        .message("a batch at the limit", "[" + (1...10_000).map { ping("\($0)") }.joined(separator: ",") + "]",
                 [.batch((1...10_000).map { .result(id: .integer(Int64($0)), [:]) })]),
        .message("a batch of notifications only",
                 #"[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method":"initialized"},{"jsonrpc":"2.0","method":"no/such"}]"#, []),
        .message("a batch of scalars", #"[1,"x",null]"#, [.batch([
            .error(invalidRequest, says: "not integer"), .error(invalidRequest, says: "not string"), .error(invalidRequest, says: "not null"),
        ])]),
        .message("a batch inside a batch", "[[" + ping("1") + "]]", [.batch([.error(invalidRequest, says: "must be a JSON object, not array")])]),
        .message("a batch of mixed good and bad messages",
                 "[" + ping("1") + #",{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":{},"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"no/such"},"# + ping(#""three""#) + "]",
                 [.batch([
                    .result(id: 1, [:]), .error(invalidRequest, says: #""id" must be"#),
                    .error(-32601, id: 2, says: "Method not found", data: ["method": "no/such"]), .result(id: "three", [:]),
                 ])]),
        .message("a batch reusing one id", "[" + ping("1") + "," + ping("1") + "]", [.batch([.result(id: 1, [:]), .result(id: 1, [:])])]),
    ]

    nonisolated static let inputs = json + encoding + nul + scalars + versions + ids + methods + params + nesting + batches

    @Test(arguments: HostileInput.trials(inputs))
    func isAnsweredAndThePingAfterIsServed(_ trial: HostileInput.Trial) throws {
        try HostileSession.run(trial)
    }
}

/// A `ping` (id 1) whose params nest `levels` deep, counting the message itself as level 1.
private func nestedPing(levels: Int) -> String {
    let arrays = levels - 2
    return #"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"# + String(repeating: "[", count: arrays)
        + String(repeating: "]", count: arrays) + "}}"
}
