import JSON

/// Where a request's response goes: straight to the outbox, or into the batch it came in.
@MainActor
enum ResponseSink {
    case outbox
    case batch(BatchCollector)

    /// Notes that a response will come for a request of this sink.
    func expect() {
        if case .batch(let batch) = self { batch.expected += 1 }
    }

    /// Delivers a response.
    func reply(_ outcome: Result<JSONValue, RPCError>, id: RequestID?, outbox: Outbox) {
        switch self {
        case .outbox:
            switch (outcome, id) {
            case (.success(let result), let id?): outbox.enqueueResult(result, id: id)
            case (.success(let result), nil): outbox.enqueue(["jsonrpc": "2.0", "id": nil, "result": result])
            case (.failure(let error), _): outbox.enqueue(error.response(id: id))
            }
        case .batch(let batch):
            batch.add(outcome, id: id)
        }
    }
}

/// Collects the responses of one batch and writes them as one array once every request has answered.
/// A batch of notifications only is answered with nothing.
@MainActor
final class BatchCollector {
    private let outbox: Outbox
    private var responses: [JSONValue] = []
    /// How many responses are owed (invalid members count as soon as they are seen).
    var expected = 0
    private var sealed = false

    init(outbox: Outbox) {
        self.outbox = outbox
    }

    func add(_ outcome: Result<JSONValue, RPCError>, id: RequestID?) {
        switch outcome {
        case .success(let result): responses.append(["jsonrpc": "2.0", "id": id?.jsonValue ?? .null, "result": result])
        case .failure(let error): responses.append(error.response(id: id))
        }
        flushIfComplete()
    }

    /// Every member has been dispatched; the array goes out when the last response arrives.
    func seal() {
        sealed = true
        flushIfComplete()
    }

    private func flushIfComplete() {
        guard sealed, responses.count >= expected, !responses.isEmpty else { return }
        outbox.enqueue(.array(responses))
        responses = []
    }
}
