import JSON
import Testing

/// Broken framing: Content-Length headers that lie or are malformed, junk and NUL bytes between
/// messages, input that ends inside a message, and messages over the size limit (with the server's
/// peak memory measured). Each is answered as the spec says and the `ping` after it is served.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct HostileFramingTests {
    nonisolated static let parseError = -32700
    nonisolated static let one = Array(ping("1").utf8)
    nonisolated static let two = Array(ping("2").utf8)

    /// A Content-Length case: the header block (`\r\n\r\n` added) followed by `rest`.
    nonisolated static func header(_ name: String, _ block: String, _ rest: [UInt8], _ answers: [Answer]) -> HostileInput {
        HostileInput(name: name, wires: [.lsp], bytes: { _ in Array("\(block)\r\n\r\n".utf8) + rest }, answers: { _ in answers })
    }

    /// What a malformed header block followed by the body `one` gets: the block's error, then the body is junk.
    nonisolated static func refusedBlock(_ says: String) -> [Answer] {
        [.error(parseError, says: says), .error(parseError, says: "skipped \(one.count) bytes that are not a Content-Length header")]
    }

    nonisolated static let contentLength: [HostileInput] = [
        header("a Content-Length too short", "Content-Length: 10", one, [
            .error(parseError, says: "Parse error"), .error(parseError, says: "skipped \(one.count - 10) bytes"),
        ]),
        header("a Content-Length too long by exactly the next frame", "Content-Length: \(one.count + framed(two, .lsp).count)",
               one + framed(two, .lsp), [.error(parseError, says: "end of file expected")]),
        header("a Content-Length too long by part of the next frame", "Content-Length: \(one.count + 10)", one + framed(two, .lsp), [
            // The body swallows "Content-Le"; "ngth: 40\r\n" is junk to the end of its line; the body of
            // the cut frame is junk up to the next header.
            .error(parseError, says: "end of file expected"),
            .error(parseError, says: "skipped \("ngth: \(two.count)\r\n".utf8.count) bytes"),
            .error(parseError, says: "skipped \(two.count) bytes"),
        ]),
        header("a header block without its body, then a frame", "Content-Length: \(one.count)", framed(two, .lsp), [
            // The body is the next frame's header and the start of its body; the rest of that is junk.
            .error(parseError, says: "invalid token"),
            .error(parseError, says: "skipped \("Content-Length: \(two.count)\r\n\r\n".utf8.count) bytes"),
        ]),
        header("a negative Content-Length", "Content-Length: -5", one, refusedBlock(#"Content-Length "-5" is not a non-negative integer"#)),
        header("a non-numeric Content-Length", "Content-Length: forty", one, refusedBlock(#"Content-Length "forty" is not a non-negative integer"#)),
        header("a fractional Content-Length", "Content-Length: 40.0", one, refusedBlock(#""40.0" is not a non-negative integer"#)),
        header("a Content-Length with a plus sign", "Content-Length: +40", one, refusedBlock(#""+40" is not a non-negative integer"#)),
        header("a hexadecimal Content-Length", "Content-Length: 0x28", one, refusedBlock(#""0x28" is not a non-negative integer"#)),
        header("an empty Content-Length", "Content-Length:", one, refusedBlock(#""" is not a non-negative integer"#)),
        header("a Content-Length beyond 64 bits", "Content-Length: 99999999999999999999999", one,
               refusedBlock(#""99999999999999999999999" is not a non-negative integer"#)),
        header("a header block without Content-Length", "Content-Type: application/json", one, refusedBlock("no Content-Length header")),
        header("an unknown header alone", "X-Request: 1", one, [
            .error(parseError, says: "skipped \("X-Request: 1\r\n".utf8.count) bytes"), .error(parseError, says: "skipped \(one.count) bytes"),
        ]),
        header("a header line without a colon", "Content-Length \(one.count)", one, refusedBlock("line without a colon")),
        header("a duplicated Content-Length with the same value", "Content-Length: \(one.count)\r\nContent-Length: \(one.count)", one,
               [.result(id: 1, [:])]),
        header("a duplicated Content-Length with different values", "Content-Length: \(one.count)\r\nContent-Length: 2", one,
               refusedBlock("conflicting Content-Length headers \(one.count) and 2")),
        header("a lower-case, padded Content-Length with Content-Type", "content-type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:   \(one.count)  ",
               one, [.result(id: 1, [:])]),
        HostileInput(name: "a header block ended by LF LF", wires: [.lsp], bytes: { _ in Array("Content-Length: \(one.count)\n\n".utf8) + one },
                     answers: { _ in [.result(id: 1, [:])] }),
        header("a header block over 8 KiB", "Content-Length: \(one.count)\r\nX-Padding: \(String(repeating: "a", count: 10_000))", one,
               [.errors(parseError, says: "header block longer than 8192 bytes")]),
        HostileInput(name: "a junk line between frames", wires: [.lsp], bytes: { _ in Array("garbage\r\n".utf8) + framed(one, .lsp) },
                     answers: { _ in [.error(parseError, says: "skipped 9 bytes"), .result(id: 1, [:])] }),
        HostileInput(name: "a newline-delimited request to a Content-Length server", wires: [.lsp], bytes: { _ in one + [0x0A] },
                     answers: { _ in [.error(parseError, says: "skipped \(one.count + 1) bytes")] }),
    ]

    nonisolated static let lines: [HostileInput] = [
        HostileInput(name: "Content-Length framing to a newline-delimited server", wires: [.ndjson],
                     bytes: { _ in Array("Content-Length: \(one.count)\r\n\r\n".utf8) + one + [0x0A] },
                     answers: { _ in [.error(parseError, says: "invalid token"), .result(id: 1, [:])] }),
        HostileInput(name: "a carriage return without a newline between two requests", wires: [.ndjson],
                     bytes: { _ in one + [0x0D] + two + [0x0A] }, answers: { _ in [.error(parseError, says: "end of file expected")] }),
        HostileInput(name: "a request broken over two lines", wires: [.ndjson],
                     bytes: { _ in Array("{\"jsonrpc\":\"2.0\",\n\"id\":1,\"method\":\"ping\"}\n".utf8) },
                     answers: { _ in [.error(parseError, says: "Parse error"), .error(parseError, says: "Parse error")] }),
    ]

    nonisolated static let between: [HostileInput] = [
        HostileInput(name: "NUL bytes between messages", bytes: { wire in
            framed(one, wire) + [0, 0, 0] + (wire == .ndjson ? [0x0A] : []) + framed(two, wire)
        }, answers: { wire in
            [.result(id: 1, [:]), .error(parseError, says: wire == .ndjson ? "invalid token" : "skipped 3 bytes"), .result(id: 2, [:])]
        }),
        HostileInput(name: "a NUL byte glued before a message", bytes: { wire in [0] + framed(one, wire) }, answers: { wire in
            // A line that starts with NUL is not JSON; a Content-Length decoder skips the byte and resyncs.
            wire == .ndjson ? [.error(parseError, says: "invalid token")] : [.error(parseError, says: "skipped 1 bytes"), .result(id: 1, [:])]
        }),
        HostileInput(name: "binary junk between messages", bytes: { wire in
            framed(one, wire) + [0xFF, 0xFE, 0x00, 0x80, 0x0A] + framed(two, wire)
        }, answers: { wire in
            [.result(id: 1, [:]), .error(parseError, says: wire == .ndjson ? "Parse error" : "skipped 5 bytes"), .result(id: 2, [:])]
        }),
        .message("a 200 KB request under --max-message-bytes 2^63-1, arriving in several reads",
                 #"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"\#(String(repeating: "x", count: 200_000))"}}"#,
                 options: ["--max-message-bytes", "\(Int.max)"], [.result(id: 1, [:])]),
        .message("a request just over a small limit", #"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"\#(String(repeating: "x", count: 100))"}}"#,
                 initializes: false, options: ["--max-message-bytes", "64"], [.error(-32600, says: "message exceeds the limit of 64 bytes and was skipped")]),
    ]

    @Test(arguments: HostileInput.trials(contentLength + lines + between))
    func isAnsweredAndThePingAfterIsServed(_ trial: HostileInput.Trial) throws {
        try HostileSession.run(trial)
    }

    // MARK: End of input

    /// Input that ends inside a message: what the server answers, then it exits 0 (end of input).
    struct Ending: Sendable, CustomTestStringConvertible {
        var name: String
        var wire: WireFraming
        var bytes: [UInt8]
        var answers: [Answer]
        var testDescription: String { "\(name) (\(wire))" }
    }

    nonisolated static let endings: [Ending] = [
        Ending(name: "a header block and no body", wire: .lsp, bytes: Array("Content-Length: \(one.count)\r\n\r\n".utf8),
               answers: [.error(parseError, says: "the input ended after 0 of the \(one.count) bytes of a message")]),
        Ending(name: "a cut body", wire: .lsp, bytes: Array("Content-Length: \(one.count)\r\n\r\n".utf8) + one.prefix(10),
               answers: [.error(parseError, says: "the input ended after 10 of the \(one.count) bytes of a message")]),
        Ending(name: "a cut header block", wire: .lsp, bytes: Array("Content-Len".utf8),
               answers: [.error(parseError, says: "the input ended inside a Content-Length header block")]),
        Ending(name: "junk without a newline", wire: .lsp, bytes: Array("garbage".utf8), answers: [.error(parseError, says: "skipped 7 bytes")]),
        Ending(name: "a last request without its newline", wire: .ndjson, bytes: one, answers: [.result(id: 1, [:])]),
        Ending(name: "a last request without its newline, after CR", wire: .ndjson, bytes: one + [0x0D], answers: [.result(id: 1, [:])]),
        Ending(name: "a cut last line", wire: .ndjson, bytes: Array(one.prefix(10)), answers: [.error(parseError, says: "Parse error")]),
        Ending(name: "blanks without a newline", wire: .ndjson, bytes: Array("  \t".utf8), answers: []),
    ]

    @Test(arguments: endings)
    func inputEndingInsideAMessageIsAnsweredAndTheServerExitsZero(_ ending: Ending) throws {
        let server = try HostileSession.start(ending.wire)
        try server.write(ending.bytes)
        server.closeInput()
        let responses = try server.receiveToEnd(framing: ending.wire)
        let problem = Answer.mismatch(responses, ending.answers)
        #expect(problem == nil, "\(problem ?? "")")
        #expect(try server.waitForExit() == 0)
    }

    // MARK: Size limit and memory

    /// Sends `prefix`, `filler` `count` times and `suffix` as one message in `wire` framing, then the
    /// `ping` after, from a background thread; returns the responses through the ping's.
    private func stream(
        _ server: ServerProcess, _ wire: WireFraming, prefix: String, filler: [UInt8], count: Int, suffix: String
    ) throws -> [JSONValue] {
        let length = prefix.utf8.count + filler.count * count + suffix.utf8.count
        let header = wire == .lsp ? "Content-Length: \(length)\r\n\r\n" : ""
        let end = Array((suffix + (wire == .ndjson ? "\n" : "")).utf8) + framed(Array(ping(#""after""#).utf8), wire)
        try server.writeInBackground([(Array((header + prefix).utf8), 1), (filler, count), (end, 1)])
        return try server.responses(through: "after", framing: wire)
    }

    nonisolated static let megabyte = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
    nonisolated static let paddedPing = #"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#

    @Test(arguments: [WireFraming.ndjson, .lsp])
    func skips200MegabytesOverA1MegabyteLimitWithoutBufferingThem(_ wire: WireFraming) throws {
        let server = try HostileSession.start(wire, options: ["--max-message-bytes", "1048576"], timeoutSeconds: 120)
        let responses = try stream(server, wire, prefix: Self.paddedPing, filler: Self.megabyte, count: 200, suffix: #""}}"#)
        let problem = Answer.mismatch(responses, [
            .error(-32600, says: "message exceeds the limit of 1048576 bytes and was skipped"), .result(id: "after", [:]),
        ])
        #expect(problem == nil, "\(problem ?? "")")
        let peak = try server.statusMegabytes("VmHWM")
        #expect(peak < 64, "peak resident set \(peak) MB")
    }

    @Test(arguments: [WireFraming.ndjson, .lsp])
    func servesA50MegabyteStringWithinARaisedLimit(_ wire: WireFraming) throws {
        let server = try HostileSession.start(wire, options: ["--max-message-bytes", "\(64 << 20)"], timeoutSeconds: 120)
        let responses = try stream(server, wire, prefix: Self.paddedPing, filler: Self.megabyte, count: 50, suffix: #""}}"#)
        let problem = Answer.mismatch(responses, [.result(id: 1, [:]), .result(id: "after", [:])])
        #expect(problem == nil, "\(problem ?? "")")
        // The message itself, jansson's copy, and the Swift string: a few times 50 MB, not more.
        let peak = try server.statusMegabytes("VmHWM")
        #expect(peak < 400, "peak resident set \(peak) MB")
    }

    @Test(arguments: [WireFraming.ndjson, .lsp])
    func refusesA50MegabyteStringOverTheDefaultLimit(_ wire: WireFraming) throws {
        let server = try HostileSession.start(wire, timeoutSeconds: 120)
        let responses = try stream(server, wire, prefix: Self.paddedPing, filler: Self.megabyte, count: 50, suffix: #""}}"#)
        let problem = Answer.mismatch(responses, [
            .error(-32600, says: "message exceeds the limit of 16777216 bytes and was skipped"), .result(id: "after", [:]),
        ])
        #expect(problem == nil, "\(problem ?? "")")
        // A newline-delimited line is held up to the 16 MiB limit before it is known to be too long.
        let peak = try server.statusMegabytes("VmHWM")
        #expect(peak < 100, "peak resident set \(peak) MB")
    }
}
