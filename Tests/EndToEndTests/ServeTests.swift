import JSON
import Testing

/// `storefront serve` over real pipes, in both framings.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct ServeTests {
    /// How the server is started and how the client frames its messages.
    struct Mode: CustomTestStringConvertible, Sendable {
        var option: String
        var wire: WireFraming

        var arguments: [String] { ["--framing", option] }
        var testDescription: String { "--framing \(option), client speaks \(wire)" }
    }

    nonisolated static let modes = [
        Mode(option: "auto", wire: .ndjson), Mode(option: "auto", wire: .lsp),
        Mode(option: "ndjson", wire: .ndjson), Mode(option: "lsp", wire: .lsp),
    ]

    static let ping = #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
    static let initialize = #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"e2e","version":"1"}}}"#
    static let shutdown = #"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#
    static let exit = #"{"jsonrpc":"2.0","method":"exit"}"#

    @Test(arguments: modes)
    func answersPing(_ mode: Mode) throws {
        let server = try ServerProcess(mode.arguments)
        try server.send([Self.ping], framing: mode.wire)
        #expect(try server.receive(framing: mode.wire) == ["jsonrpc": "2.0", "id": 1, "result": [:]])
        server.closeInput()
        #expect(try server.receiveToEnd(framing: mode.wire).isEmpty)
        #expect(try server.waitForExit() == 0)
    }

    @Test(arguments: modes)
    func initializeSaysWhoTheServerIs(_ mode: Mode) throws {
        let server = try ServerProcess(mode.arguments)
        try server.send([Self.initialize], framing: mode.wire)
        let answer = try server.receive(framing: mode.wire)
        #expect(answer["id"] == 0 && answer["jsonrpc"] == "2.0" && answer["error"] == nil)
        let result = try #require(answer["result"]?.objectValue)
        #expect(Set(result.keys) == ["protocolVersion", "serverInfo", "capabilities"])
        #expect(result["protocolVersion"]?.stringValue?.isEmpty == false)
        #expect(result["serverInfo"]?["name"] == "storefront")
        #expect(result["serverInfo"]?["version"]?.stringValue?.isEmpty == false)
        #expect(result["capabilities"]?.objectValue != nil)
    }

    @Test(arguments: modes)
    func servesPingAfterAMalformedMessage(_ mode: Mode) throws {
        let server = try ServerProcess(mode.arguments)
        try server.send([#"{"jsonrpc":"2.0","id":1,"method":"#, Self.ping], framing: mode.wire)
        let malformed = try server.receive(framing: mode.wire)
        #expect(malformed["id"] == .null)
        #expect(malformed["error"]?["code"] == -32700)
        #expect(try server.receive(framing: mode.wire) == ["jsonrpc": "2.0", "id": 1, "result": [:]])
    }

    @Test(arguments: modes)
    func answersABatchWithOneArray(_ mode: Mode) throws {
        let server = try ServerProcess(mode.arguments)
        try server.send([#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":"two","method":"ping"},42]"#], framing: mode.wire)
        let answer = try #require(try server.receive(framing: mode.wire).arrayValue)
        #expect(answer.count == 3)
        #expect(answer.prefix(2) == [["jsonrpc": "2.0", "id": 1, "result": [:]], ["jsonrpc": "2.0", "id": "two", "result": [:]]])
        #expect(answer.last?["error"]?["code"] == -32600)
        try server.send([#"[{"jsonrpc":"2.0","method":"ping"}]"#, Self.ping], framing: mode.wire)
        #expect(try server.receive(framing: mode.wire)["id"] == 1, "a batch of notifications is not answered")
    }

    @Test(arguments: modes)
    func answersEveryPipelinedRequestBeforeExitingAtEndOfInput(_ mode: Mode) throws {
        let server = try ServerProcess(mode.arguments)
        let count = 500
        try server.send([Self.initialize] + (1...count).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"ping"}"# }, framing: mode.wire)
        server.closeInput()
        let answers = try server.receiveToEnd(framing: mode.wire)
        #expect(answers.map { $0["id"] } == (0...count).map { .integer(Int64($0)) })
        #expect(answers.dropFirst().allSatisfy { $0["result"] == [:] })
        #expect(try server.waitForExit() == 0)
    }

    @Test(arguments: modes)
    func exitsWithZeroAfterShutdownAndExit(_ mode: Mode) throws {
        let server = try ServerProcess(mode.arguments)
        try server.send([Self.initialize, Self.shutdown, Self.exit], framing: mode.wire)
        let answers = try server.receiveToEnd(framing: mode.wire)
        #expect(answers.map { $0["id"] } == [0, "bye"])
        #expect(answers.last == ["jsonrpc": "2.0", "id": "bye", "result": nil])
        #expect(try server.waitForExit() == 0)
    }

    @Test(arguments: modes)
    func exitsWithOneOnExitWithoutShutdown(_ mode: Mode) throws {
        let server = try ServerProcess(mode.arguments)
        try server.send([Self.initialize, Self.exit], framing: mode.wire)
        #expect(try server.receiveToEnd(framing: mode.wire).map { $0["id"] } == [0])
        #expect(try server.waitForExit() == 1)
    }

    @Test(arguments: modes)
    func writesOnlyProtocolBytesToStdoutAndLogsToStderr(_ mode: Mode) throws {
        let server = try ServerProcess(mode.arguments + ["--log-level", "debug"])
        try server.send([
            Self.initialize, Self.ping, "{oops", #"{"jsonrpc":"2.0","id":2,"method":"no.such.method"}"#,
            #"{"jsonrpc":"2.0","method":"unknown.notification"}"#, #"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            Self.shutdown, Self.exit,
        ], framing: mode.wire)
        let answers = try server.receiveToEnd(framing: mode.wire)
        #expect(answers.map { $0["id"] } == [0, 1, .null, 2, "bye"])
        for answer in answers {
            let members = try #require(answer.objectValue)
            #expect(members["jsonrpc"] == "2.0")
            #expect(members["id"] != nil)
            #expect((members["result"] == nil) != (members["error"] == nil), "\(answer)")
            #expect(Set(members.keys).isSubset(of: ["jsonrpc", "id", "result", "error"]))
        }
        #expect(try server.waitForExit() == 0)
        #expect(server.errorText.contains("debug"), "stderr: \(server.errorText)")
        #expect(server.errorText.contains("unknown.notification"), "stderr: \(server.errorText)")
    }

    @Test(arguments: modes)
    func rejectsAMessageOverTheLimitAndKeepsServing(_ mode: Mode) throws {
        let server = try ServerProcess(mode.arguments + ["--max-message-bytes", "100"])
        let large = #"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"\#(String(repeating: "x", count: 200))"}}"#
        try server.send([large, Self.ping], framing: mode.wire)
        let refusal = try server.receive(framing: mode.wire)
        #expect(refusal["id"] == .null)
        #expect(refusal["error"]?["code"] == -32600)
        #expect(refusal["error"]?["message"]?.stringValue?.contains("limit of 100 bytes") == true, "\(refusal)")
        #expect(try server.receive(framing: mode.wire) == ["jsonrpc": "2.0", "id": 1, "result": [:]])
        server.closeInput()
        #expect(try server.receiveToEnd(framing: mode.wire).isEmpty)
        #expect(try server.waitForExit() == 0)
    }

    @Test func answersInTheFramingItDetected() throws {
        for wire in [WireFraming.ndjson, .lsp] {
            let server = try ServerProcess(["--framing", "auto"])
            try server.send([Self.ping, Self.ping], framing: wire)
            server.closeInput()
            // receiveToEnd parses strictly in `wire` framing: any other framing fails here.
            #expect(try server.receiveToEnd(framing: wire).count == 2, "\(wire)")
        }
    }

    @Test func aContentLengthServerAnswersANewlineDelimitedMessageWithAParseError() throws {
        let server = try ServerProcess(["--framing", "lsp"])
        try server.write(Array((Self.ping + "\n").utf8) + WireFraming.lsp.frame(Self.ping))
        let refusal = try server.receive(framing: .lsp)
        #expect(refusal["error"]?["code"] == -32700)
        #expect(try server.receive(framing: .lsp)["id"] == 1)
    }

    /// SQLite's process-wide settings (no mutex per connection call or per allocation) take effect only if set
    /// before the first connection; a connection opened earlier (say, by a new start-up step) would quietly
    /// leave the slower defaults. The server says which it got.
    @Test func appliesSQLitesProcessSettingsBeforeItsFirstConnection() throws {
        let server = try ServerProcess(["--log-level", "info"])
        try server.send([Self.initialize, Self.shutdown, Self.exit], framing: .ndjson)
        _ = try server.receiveToEnd(framing: .ndjson)
        #expect(try server.waitForExit() == 0)
        #expect(server.errorText.contains("sqliteSettings=applied"), "stderr: \(server.errorText)")
    }

    @Test func helpListsTheServeOptions() throws {
        let server = try ServerProcess(["--help"])
        let help = try server.outputText()
        for option in ["--framing", "--log-level", "--max-message-bytes"] {
            #expect(help.contains(option), "\(help)")
        }
        #expect(try server.waitForExit() == 0)
    }
}
