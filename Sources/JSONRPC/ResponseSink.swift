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

    /// Delivers a response whose result `make` makes: at once, or in a batch when the batch's array is written.
    func reply(madeBy make: @escaping @MainActor () throws -> JSONValue, id: RequestID?, outbox: Outbox) {
        switch self {
        case .outbox: reply(Self.outcome(of: make), id: id, outbox: outbox)
        case .batch(let batch): batch.add(madeBy: make, id: id)
        }
    }

    /// What `make` makes, or the error it throws.
    static func outcome(of make: @MainActor () throws -> JSONValue) -> Result<JSONValue, RPCError> {
        do {
            return .success(try make())
        } catch {
            return .failure(RPCError(from: error))
        }
    }
}

/// Collects the responses of one batch and writes them as one array once every request has answered.
/// A batch of notifications only is answered with nothing.
///
/// A response that shows state (``MethodHandler/immediateSnapshot``) is made when the array is written: made when
/// its request ran, it could be older than a notification another member's work wrote before the array (the
/// state of a ViewModel opened in the batch, at version 1, after its version 2 went out).
@MainActor
final class BatchCollector {
    /// A response, or how to make it when the array is written.
    private enum Response {
        case made(JSONValue)
        case later(@MainActor () throws -> JSONValue, id: RequestID?)
    }

    private let outbox: Outbox
    private var responses: [Response] = []
    /// How many responses are owed (invalid members count as soon as they are seen).
    var expected = 0
    private var sealed = false

    init(outbox: Outbox) {
        self.outbox = outbox
    }

    func add(_ outcome: Result<JSONValue, RPCError>, id: RequestID?) {
        responses.append(.made(Self.response(outcome, id: id)))
        flushIfComplete()
    }

    /// Adds a response whose result `make` makes when the array is written.
    func add(madeBy make: @escaping @MainActor () throws -> JSONValue, id: RequestID?) {
        responses.append(.later(make, id: id))
        flushIfComplete()
    }

    private static func response(_ outcome: Result<JSONValue, RPCError>, id: RequestID?) -> JSONValue {
        switch outcome {
        case .success(let result): ["jsonrpc": "2.0", "id": id?.jsonValue ?? .null, "result": result]
        case .failure(let error): error.response(id: id)
        }
    }

    /// Every member has been dispatched; the array goes out when the last response arrives.
    func seal() {
        sealed = true
        flushIfComplete()
    }

    private func flushIfComplete() {
        guard sealed, responses.count >= expected, !responses.isEmpty else { return }
        let complete = responses
        responses = []
        // Made in order, each after the notifications the ones before it flushed.
        outbox.enqueue(.array(complete.map { response in
            switch response {
            case .made(let value): value
            case .later(let make, let id): Self.response(ResponseSink.outcome(of: make), id: id)
            }
        }))
    }
}
