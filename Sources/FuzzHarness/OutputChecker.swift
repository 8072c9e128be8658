import JSON
import JSONPatch
import JSONRPC
import JSONRPCTransport

/// Reads everything the server wrote in one fuzz iteration and records each way it breaks the protocol:
/// output that is not framed JSON, messages that are not JSON-RPC 2.0, a request answered twice or never,
/// state notifications whose versions skip or whose patches do not apply, an action answered before the
/// notification of the version it reports, and the lifecycle rules (`OutputChecker+Lifecycle.swift`).
struct OutputChecker {
    /// What went wrong, one sentence each.
    private(set) var violations: [String] = []
    /// Every message written, parsed, in order.
    private(set) var messages: [JSONValue] = []
    /// Each open ViewModel's state as a client rebuilds it from the open answer and the patches.
    private(set) var mirrors: [String: Mirror] = [:]

    /// A client's copy of one ViewModel.
    struct Mirror {
        /// The version of the last notification (1 at open).
        var version: Int64 = 1
        /// The state at `version`; `nil` until the open answer has been read (it can come after the first
        /// notifications when the open was in a batch that waited for a slower member).
        var state: JSONValue?
        /// Notifications read before the open answer, applied once it comes.
        var early: [JSONValue] = []
    }

    /// Checks `output` against what the input owed.
    ///
    /// - Parameters:
    ///   - output: the bytes written.
    ///   - framing: the framing the server answers in.
    ///   - expected: what the input owed.
    mutating func check(output: [UInt8], framing: Framing, expected: ExpectedAnswers) {
        readMessages(output, framing: framing)
        var callsById: [JSONValue: [ExpectedAnswers.Call]] = [:]
        for call in expected.calls { callsById[call.id, default: []].append(call) }
        var singles: [JSONValue] = []
        var singleErrors: [JSONValue: Int] = [:]
        var batches: [[JSONValue]] = []
        var log = AnswerLog()
        for (position, message) in messages.enumerated() {
            switch message {
            case .array(let elements):
                guard !elements.isEmpty else {
                    fail("an empty array was written")
                    continue
                }
                for element in elements {
                    checkResponse(element, callsById: callsById, inBatch: true)
                    log.note(element, at: position, callsById: callsById)
                }
                batches.append(elements.map { $0["id"] ?? .null })
            case .object(let members) where members["method"] != nil:
                checkNotification(members)
                if case .string(let handle)? = members["params"]?["viewModel"] { log.notifications[handle, default: []].append(position) }
            default:
                checkResponse(message, callsById: callsById, inBatch: false)
                log.note(message, at: position, callsById: callsById)
                let id = message["id"] ?? .null
                singles.append(id)
                if message["error"] != nil { singleErrors[id, default: 0] += 1 }
            }
        }
        compare(singles: singles, errors: singleErrors, batches: batches, expected: expected)
        checkLifecycle(expected.calls, log: log)
    }

    /// Records a violation.
    mutating func fail(_ violation: String) {
        violations.append(violation)
    }

    // MARK: Framing and shape

    private mutating func readMessages(_ output: [UInt8], framing: Framing) {
        var decoder = FrameDecoder(choice: framing == .newlineDelimited ? .ndjson : .lsp, maxMessageBytes: Int.max / 2)
        decoder.append(output)
        while let event = decoder.next() {
            switch event {
            case .message(let body):
                do {
                    messages.append(try body.withUnsafeBytes { try JSONValue(parsing: $0) })
                } catch {
                    fail("unparsable output \(Self.excerpt(body)): \(error)")
                }
            case .error(let error):
                fail("output is not framed as \(framing.rawValue): \(error)")
            }
        }
        if decoder.bufferedByteCount > 0 {
            fail("output ends inside a message: \(decoder.bufferedByteCount) bytes left")
        }
    }

    private mutating func checkResponse(
        _ response: JSONValue, callsById: [JSONValue: [ExpectedAnswers.Call]], inBatch: Bool
    ) {
        guard case .object(let members) = response else {
            return fail("a response is not an object: \(Self.excerpt(response))")
        }
        guard Set(members.keys).isSubset(of: ["jsonrpc", "id", "result", "error"]), members["jsonrpc"] == "2.0" else {
            return fail("a response has other members or no jsonrpc 2.0: \(Self.excerpt(response))")
        }
        switch members["id"] {
        case .integer?, .string?, .null?: break
        default: fail("a response's id is missing or not an integer, string or null: \(Self.excerpt(response))")
        }
        switch (members["result"], members["error"]) {
        case (_?, nil):
            if members["id"] == .null { fail("a success answers id null: \(Self.excerpt(response))") }
            let result = members["result"]!
            if case .string(let handle)? = result["viewModel"], case .integer(let version)? = result["version"],
               let state = result["state"], case .object = state {
                checkState(of: handle, version: version, state: state, inBatch: inBatch)
            }
            if let id = members["id"], let calls = callsById[id], calls.count == 1 {
                checkResult(result, of: calls[0])
            }
        case (nil, .object(let error)?):
            guard Set(error.keys).isSubset(of: ["code", "message", "data"]), error["code"]?.integerValue != nil,
                  error["message"]?.stringValue != nil
            else {
                return fail("an error object is not {code, message, data?}: \(Self.excerpt(response))")
            }
        default:
            fail("a response has not exactly one of result and error: \(Self.excerpt(response))")
        }
    }

    private mutating func checkNotification(_ members: [String: JSONValue]) {
        guard Set(members.keys) == ["jsonrpc", "method", "params"], members["jsonrpc"] == "2.0",
              members["method"] == "viewModel/changed", case .object(let params)? = members["params"],
              case .string(let handle)? = params["viewModel"], case .integer(let version)? = params["version"]
        else {
            return fail("a notification is not a viewModel/changed: \(Self.excerpt(.object(members)))")
        }
        var mirror = mirrors[handle] ?? Mirror()
        if version != mirror.version + 1 {
            fail("\(handle): notification version \(version) after \(mirror.version)")
        }
        mirror.version = version
        if mirror.state == nil {
            mirror.early.append(.object(params))
        } else {
            apply(.object(params), to: &mirror, handle: handle)
        }
        mirrors[handle] = mirror
    }

    /// Applies one notification's patch (or snapshot) to a mirror.
    private mutating func apply(_ params: JSONValue, to mirror: inout Mirror, handle: String) {
        guard let state = mirror.state else { return }
        switch (params["patch"], params["state"]) {
        case (let patch?, nil):
            do {
                mirror.state = try JSONPatch(json: patch).apply(to: state)
            } catch {
                fail("\(handle): patch to version \(params["version"] ?? .null) does not apply: \(error)")
            }
        case (nil, let snapshot?):
            mirror.state = snapshot
        default:
            fail("\(handle): a notification has not exactly one of patch and state")
        }
    }

    /// Checks an answer carrying a ViewModel's whole state (`viewModel/open`, `viewModel/get`) against the
    /// notifications read before it; the first one at version 1 is the open's, the client's starting point.
    /// Told apart by shape, not by request, so that it holds whatever ids the input reuses. An answer in a
    /// batch is written when the whole batch is done, so it may be older than the last notification.
    private mutating func checkState(of handle: String, version: Int64, state: JSONValue, inBatch: Bool) {
        var mirror = mirrors[handle] ?? Mirror()
        guard let mirrored = mirror.state else {
            // Before the open's answer only a get in a batch that finished first can carry a state.
            guard version == 1 else { return }
            mirror.state = state
            for early in mirror.early { apply(early, to: &mirror, handle: handle) }
            mirror.early = []
            mirrors[handle] = mirror
            return
        }
        if inBatch {
            if version > mirror.version {
                fail("\(handle): an answer in a batch has version \(version), notifications reached \(mirror.version)")
            }
        } else if version != mirror.version {
            fail("\(handle): an answer has version \(version), notifications reached \(mirror.version)")
        } else if state != mirrored {
            fail("\(handle): an answer's state differs from the patched mirror at version \(mirror.version)")
        }
    }

    /// Checks what an answer says against its request, when only one request had its id.
    private mutating func checkResult(_ result: JSONValue, of call: ExpectedAnswers.Call) {
        switch call.method {
        case "viewModel/open", "viewModel/get":
            guard case .string? = result["viewModel"], case .integer? = result["version"], case .object? = result["state"],
                  call.method == "viewModel/get" || result["version"] == 1
            else {
                return fail("\(call.method) answered \(Self.excerpt(result)), not {viewModel, version, state}")
            }
        case let method where method.contains("/") && !method.hasPrefix("viewModel/") && !method.hasPrefix("$/"):
            // An action: its notifications come before its answer, so the version it reports was sent.
            guard let handle = call.handle, let mirror = mirrors[handle], mirror.state != nil,
                  case .integer(let version)? = result["version"]
            else { return }
            if version > mirror.version {
                fail("\(call.method) on \(handle) answered version \(version) before its notification (last sent \(mirror.version))")
            }
        default:
            break
        }
    }

    // MARK: One answer per request

    private mutating func compare(
        singles: [JSONValue], errors: [JSONValue: Int], batches: [[JSONValue]], expected: ExpectedAnswers
    ) {
        var owed: [JSONValue: Int] = [:]
        var owedErrors: [JSONValue: Int] = [:]
        for single in expected.singles {
            owed[single.id, default: 0] += 1
            if single.mustBeError { owedErrors[single.id, default: 0] += 1 }
        }
        var written: [JSONValue: Int] = [:]
        for id in singles { written[id, default: 0] += 1 }
        for id in Set(owed.keys).union(written.keys).sorted(by: Self.idOrder) where owed[id] != written[id] {
            fail("id \(id): \(owed[id] ?? 0) answers owed, \(written[id] ?? 0) written")
        }
        for (id, count) in owedErrors where errors[id, default: 0] < count {
            fail("id \(id): \(count) invalid messages owe an error, \(errors[id, default: 0]) errors written")
        }
        let owedBatches = expected.batches.map { $0.sorted(by: Self.idOrder) }.sorted(by: Self.batchOrder)
        let writtenBatches = batches.map { $0.sorted(by: Self.idOrder) }.sorted(by: Self.batchOrder)
        if owedBatches != writtenBatches {
            fail("batch answers owed \(owedBatches), written \(writtenBatches)")
        }
    }

    private static func idOrder(_ a: JSONValue, _ b: JSONValue) -> Bool {
        a.serializedString() < b.serializedString()
    }

    private static func batchOrder(_ a: [JSONValue], _ b: [JSONValue]) -> Bool {
        a.map { $0.serializedString() }.lexicographicallyPrecedes(b.map { $0.serializedString() })
    }

    static func excerpt(_ value: JSONValue) -> String {
        String(value.serializedString().prefix(300))
    }

    static func excerpt(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription
    }
}
