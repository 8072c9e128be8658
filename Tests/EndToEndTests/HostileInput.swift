import JSON
import Testing

/// What the server must answer, response by response.
indirect enum Answer: Sendable, CustomStringConvertible {
    /// An error response with exactly this code and id, a message containing `says`, and exactly `data`
    /// when it is given.
    case error(Int, id: JSONValue = .null, says: String, data: JSONValue? = nil)
    /// One or more error responses with this code and id `null`, one of them containing `says`: for input
    /// whose number of errors depends on how its bytes arrive in reads.
    case errors(Int, says: String)
    /// -32602 naming `parameter` in `data.parameter` (and in the message), with a `data.reason`.
    case invalidParams(id: JSONValue, parameter: String)
    /// -32001 (refused) with `data.reason`, and exactly `details` when given.
    case refused(id: JSONValue, reason: String, details: JSONValue? = nil)
    /// A success response with exactly this result.
    case result(id: JSONValue, JSONValue)
    /// A success response of an action: `{version, ...}`.
    case actionResult(id: JSONValue)
    /// One batch response: an array of these answers, in this order.
    case batch([Answer])

    var description: String {
        switch self {
        case .error(let code, let id, let says, let data): "error \(code) id \(id) \"\(says)\"\(data.map { " data \($0)" } ?? "")"
        case .errors(let code, let says): "one or more errors \(code) \"\(says)\""
        case .invalidParams(let id, let parameter): "-32602 id \(id) parameter \(parameter.debugDescription)"
        case .refused(let id, let reason, let details): "-32001 id \(id) reason \(reason)\(details.map { " details \($0)" } ?? "")"
        case .result(let id, let result): "result id \(id): \(result)"
        case .actionResult(let id): "action result id \(id)"
        case .batch(let answers): "batch of \(answers.count)"
        }
    }

    /// Why `responses` are not exactly `answers`, or `nil` when they are.
    static func mismatch(_ responses: [JSONValue], _ answers: [Answer]) -> String? {
        var remaining = responses[...]
        for answer in answers {
            if case .errors(let code, let says) = answer {
                var taken: [JSONValue] = []
                while let next = remaining.first, next["error"]?["code"] == .integer(Int64(code)), next["id"] == .null {
                    taken.append(next)
                    remaining = remaining.dropFirst()
                }
                if taken.isEmpty { return "expected \(answer), got \(remaining.first.map { "\($0)" } ?? "nothing")" }
                if let problem = taken.lazy.compactMap({ envelopeProblem($0, id: .null) }).first { return problem }
                guard taken.contains(where: { $0["error"]?["message"]?.stringValue?.contains(says) == true }) else {
                    return "no message of \(taken) contains \(says.debugDescription)"
                }
                continue
            }
            guard let response = remaining.popFirst() else { return "expected \(answer), got nothing more" }
            if let problem = answer.mismatch(response) { return problem }
        }
        if let extra = remaining.first { return "unexpected response \(extra)" }
        return nil
    }

    private func mismatch(_ response: JSONValue) -> String? {
        func fail(_ why: String) -> String { "expected \(self), got \(response): \(why)" }
        switch self {
        case .batch(let answers):
            guard let elements = response.arrayValue else { return fail("not a batch response") }
            return Self.mismatch(elements, answers).map { "in a batch response: \($0)" }
        case .result(let id, let result):
            if let problem = Self.envelopeProblem(response, id: id) { return fail(problem) }
            return response["result"] == result ? nil : fail("another result")
        case .actionResult(let id):
            if let problem = Self.envelopeProblem(response, id: id) { return fail(problem) }
            return response["result"]?["version"]?.integerValue != nil ? nil : fail("no version in the result")
        case .error(let code, let id, let says, let data):
            if let problem = Self.errorProblem(response, code: code, id: id) { return fail(problem) }
            if response["error"]?["message"]?.stringValue?.contains(says) != true { return fail("the message does not say \(says.debugDescription)") }
            if let data, response["error"]?["data"] != data { return fail("another data") }
            return nil
        case .invalidParams(let id, let parameter):
            if let problem = Self.errorProblem(response, code: -32602, id: id) { return fail(problem) }
            let data = response["error"]?["data"]
            if data?["parameter"] != .string(parameter) { return fail("data.parameter is not \(parameter.debugDescription)") }
            if data?["reason"]?.stringValue?.isEmpty != false { return fail("no data.reason") }
            if !parameter.isEmpty, response["error"]?["message"]?.stringValue?.contains(parameter) != true {
                return fail("the message does not name the parameter")
            }
            return nil
        case .refused(let id, let reason, let details):
            if let problem = Self.errorProblem(response, code: -32001, id: id) { return fail(problem) }
            let data = response["error"]?["data"]
            if data?["reason"] != .string(reason) { return fail("data.reason is not \(reason)") }
            if let details, data?["details"] != details { return fail("other data.details") }
            return nil
        case .errors:
            return fail("one or more errors are matched by the list")
        }
    }

    /// A problem with the error response's envelope and code, or `nil`.
    private static func errorProblem(_ response: JSONValue, code: Int, id: JSONValue) -> String? {
        if let problem = envelopeProblem(response, id: id) { return problem }
        guard let error = response["error"]?.objectValue else { return "not an error" }
        if error["code"] != .integer(Int64(code)) { return "code is not \(code)" }
        if error["message"]?.stringValue?.isEmpty != false { return "no message" }
        if !Set(error.keys).isSubset(of: ["code", "message", "data"]) { return "extra members in the error" }
        return nil
    }

    /// A problem with the JSON-RPC 2.0 response envelope (`jsonrpc`, `id`, exactly one of result/error).
    private static func envelopeProblem(_ response: JSONValue, id: JSONValue) -> String? {
        guard let members = response.objectValue else { return "not an object" }
        if members["jsonrpc"] != "2.0" { return "jsonrpc is not \"2.0\"" }
        if members["id"] != id { return "id is not \(id)" }
        if (members["result"] == nil) == (members["error"] == nil) { return "not exactly one of result and error" }
        if !Set(members.keys).isSubset(of: ["jsonrpc", "id", "result", "error"]) { return "extra members" }
        return nil
    }
}

/// Hostile bytes sent to a fresh server, and what it must answer before it serves the `ping` after them.
struct HostileInput: Sendable {
    /// What the tests report.
    var name: String
    /// The framings in which the case applies (the server runs `--framing auto`, first spoken to with a
    /// well-framed `ping`, so detection is settled before the hostile bytes come).
    var wires: [WireFraming] = [.ndjson, .lsp]
    /// Extra `storefront serve` options.
    var options: [String] = []
    /// Whether to `initialize` before the hostile bytes.
    var initializes = true
    /// The hostile bytes, as sent on a wire of this framing.
    var bytes: @Sendable (WireFraming) -> [UInt8]
    /// The responses the bytes must get, in order, before the `ping` after them is answered.
    var answers: @Sendable (WireFraming) -> [Answer]

    /// One case: one message body framed as the wire frames it.
    static func message(
        _ name: String, _ body: [UInt8], wires: [WireFraming] = [.ndjson, .lsp], initializes: Bool = true,
        options: [String] = [], _ answers: [Answer]
    ) -> HostileInput {
        HostileInput(
            name: name, wires: wires, options: options, initializes: initializes,
            bytes: { framed(body, $0) }, answers: { _ in answers })
    }

    /// One case: one message body given as text.
    static func message(
        _ name: String, _ body: String, wires: [WireFraming] = [.ndjson, .lsp], initializes: Bool = true,
        options: [String] = [], _ answers: [Answer]
    ) -> HostileInput {
        message(name, Array(body.utf8), wires: wires, initializes: initializes, options: options, answers)
    }

    /// One trial: a case in one framing.
    struct Trial: Sendable, CustomTestStringConvertible {
        var input: HostileInput
        var wire: WireFraming
        var testDescription: String { "\(input.name) (\(wire))" }
    }

    /// Every case in each framing it applies to.
    static func trials(_ inputs: [HostileInput]) -> [Trial] {
        inputs.flatMap { input in input.wires.map { Trial(input: input, wire: $0) } }
    }
}

/// `body` framed as `wire` frames it: a line, or a Content-Length frame.
func framed(_ body: [UInt8], _ wire: WireFraming) -> [UInt8] {
    switch wire {
    case .ndjson: body + [0x0A]
    case .lsp: Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
    }
}

/// `{"jsonrpc":"2.0","id":<id>,"method":"ping"}`.
func ping(_ id: String) -> String { #"{"jsonrpc":"2.0","id":\#(id),"method":"ping"}"# }

/// Runs hostile input against fresh servers, each followed by a `ping` that must be served.
@MainActor
enum HostileSession {
    static let initialize = #"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"clientInfo":{"name":"hostile"}}}"#

    /// Starts a server (`--framing auto`, a private in-memory database), settles the framing with a `ping`
    /// and `initialize`s it unless told not to.
    static func start(_ wire: WireFraming, options: [String] = [], initializes: Bool = true, timeoutSeconds: Int64 = 60) throws -> ServerProcess {
        let server = try ServerProcess(["--framing", "auto", "--database", ":memory:"] + options, timeoutSeconds: timeoutSeconds)
        try server.send([ping(#""before""#)], framing: wire)
        #expect(try server.receive(framing: wire) == ["jsonrpc": "2.0", "id": "before", "result": [:]])
        if initializes {
            try server.send([initialize], framing: wire)
            #expect(try server.responses(through: "init", framing: wire).last?["result"]?["serverInfo"]?["name"] == "storefront")
        }
        return server
    }

    /// Sends `ping` with id `"after"` and expects `answers` before its answer (notifications aside).
    static func expectAnswersThenPing(
        _ server: ServerProcess, _ wire: WireFraming, _ answers: [Answer], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try server.send([ping(#""after""#)], framing: wire)
        var responses = try server.responses(through: "after", framing: wire)
        let served = responses.removeLast()
        #expect(served == ["jsonrpc": "2.0", "id": "after", "result": [:]], "the ping after was not served", sourceLocation: sourceLocation)
        let problem = Answer.mismatch(responses, answers)
        #expect(problem == nil, "\(problem ?? "")", sourceLocation: sourceLocation)
    }

    /// Runs one trial.
    static func run(_ trial: HostileInput.Trial, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let server = try start(trial.wire, options: trial.input.options, initializes: trial.input.initializes)
        try server.write(trial.input.bytes(trial.wire))
        try expectAnswersThenPing(server, trial.wire, trial.input.answers(trial.wire), sourceLocation: sourceLocation)
    }
}
