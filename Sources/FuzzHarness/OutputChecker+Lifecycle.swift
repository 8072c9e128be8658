import JSON
import JSONRPC

/// Where and how each request was answered, for the checks that relate answers to one another.
struct AnswerLog {
    /// One answer.
    struct Answer {
        /// The index of the message that holds it (a batch answer holds several).
        var position: Int
        /// The `error` object, or `nil` for a success.
        var error: JSONValue?
    }

    /// The answer of each request whose id no other request used, by dispatch sequence; none when
    /// another answer (to an invalid message) had the same id, since then either may be the request's.
    var answers: [Int: Answer] = [:]
    private var ambiguous: Set<Int> = []
    /// The positions of each ViewModel's notifications.
    var notifications: [String: [Int]] = [:]

    /// Notes an answer written at `position`.
    mutating func note(_ response: JSONValue, at position: Int, callsById: [JSONValue: [ExpectedAnswers.Call]]) {
        guard let id = response["id"], let calls = callsById[id], calls.count == 1 else { return }
        let sequence = calls[0].sequence
        guard !ambiguous.contains(sequence), answers[sequence] == nil else {
            answers[sequence] = nil
            ambiguous.insert(sequence)
            return
        }
        answers[sequence] = Answer(position: position, error: response["error"])
    }
}

extension OutputChecker {
    /// The lifecycle rules of the protocol, for requests whose id no other request used:
    ///
    /// - before a successful `initialize`, anything but `initialize`, `ping` and `rpc.discover` is
    ///   refused with -32002;
    /// - after a successful `shutdown`, every request is refused; `shutdown` answers only once every
    ///   request dispatched before it has answered;
    /// - a ViewModel sends no notification once its `viewModel/close` has answered;
    /// - errors carry the `data` the protocol documents for their code.
    mutating func checkLifecycle(_ calls: [ExpectedAnswers.Call], log: AnswerLog) {
        // The first initialize that succeeded, or whose answer cannot be told apart (its id was reused).
        let initialized = calls.first { $0.method == "initialize" && log.answers[$0.sequence]?.error == nil }
        let shutdown = calls.first { $0.method == "shutdown" && log.answers[$0.sequence].map { $0.error == nil } == true }
        for call in calls {
            guard let answer = log.answers[call.sequence] else { continue }
            if let error = answer.error { checkErrorData(error, of: call) }
            if call.sequence < initialized?.sequence ?? Int.max,
               !["initialize", "ping", "rpc.discover"].contains(call.method), answer.error?["code"] != -32002 {
                fail("\(call.method) (id \(call.id)) before initialize was not refused with -32002")
            }
            if let shutdown, call.sequence > shutdown.sequence, answer.error == nil {
                fail("\(call.method) (id \(call.id)) after shutdown succeeded")
            }
            if let shutdown, let shutdownAnswer = log.answers[shutdown.sequence], call.sequence < shutdown.sequence,
               !call.inBatch, !shutdown.inBatch, answer.position > shutdownAnswer.position {
                fail("shutdown answered before \(call.method) (id \(call.id)), dispatched before it")
            }
            if call.method == "viewModel/close", answer.error == nil, let handle = call.handle,
               let late = log.notifications[handle]?.first(where: { $0 > answer.position }) {
                fail("\(handle) sent a notification (message \(late)) after its close answered (message \(answer.position))")
            }
        }
    }

    /// The `data` of each documented error code: -32601 `{method}`, -32602 `{parameter, reason}`,
    /// -32001 and -32003 `{reason, details, retryable}`.
    private mutating func checkErrorData(_ error: JSONValue, of call: ExpectedAnswers.Call) {
        let data = error["data"]
        let code = error["code"]?.integerValue ?? 0
        let fine: Bool
        if code == -32601 {
            fine = data?["method"] == .string(call.method)
        } else if code == -32602 {
            fine = data?["parameter"]?.stringValue != nil && data?["reason"]?.stringValue != nil
        } else if code == -32001 || code == -32003 {
            fine = data?["reason"]?.stringValue != nil && data?["details"]?.objectValue != nil
                && data?["retryable"]?.boolValue != nil
        } else {
            fine = true
        }
        if !fine {
            fail("\(call.method) (id \(call.id)) answered error \(Self.excerpt(error)) without the documented data")
        }
    }
}
