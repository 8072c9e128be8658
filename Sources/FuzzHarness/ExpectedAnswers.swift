import JSON
import JSONRPC

/// What the client sent, as the protocol document defines it, and therefore what the server owes:
/// written independently of `Connection`'s dispatch so that the two can disagree.
///
/// Every framing error and unparsable body owes one error with id `null`; a request (or an invalid
/// message) owes one response with its id (`null` when the id cannot be read); a notification and a
/// response sent by the client owe nothing; a batch owes one array holding the answers its members owe,
/// or nothing when they owe nothing; an empty or oversized batch owes one error.
struct ExpectedAnswers {
    /// An answer owed outside any batch.
    struct Single: Equatable {
        /// The id as written in the answer (`null` for unreadable ids).
        var id: JSONValue
        /// Whether the answer must be an error (the message was not a valid request).
        var mustBeError: Bool
    }

    /// A request that reached dispatch, for the checks that relate an answer to its request.
    struct Call {
        var id: JSONValue
        var method: String
        /// `params.viewModel`, when it is a string.
        var handle: String?
        /// The position in dispatch order (the index in ``calls``).
        var sequence: Int
        /// Whether it came in a batch.
        var inBatch: Bool
    }

    /// The answers owed outside batches.
    private(set) var singles: [Single] = []
    /// For each batch that owes an answer, the ids it must hold (in any order).
    private(set) var batches: [[JSONValue]] = []
    /// Every request with an id, in dispatch order.
    private(set) var calls: [Call] = []
    /// The largest batch the connection accepts.
    let maxBatchLength: Int

    init(maxBatchLength: Int) {
        self.maxBatchLength = maxBatchLength
    }

    /// Notes a framing error the decoder reported.
    mutating func noteFramingError() {
        singles.append(Single(id: .null, mustBeError: true))
    }

    /// Notes a message body handed to the connection.
    mutating func noteMessage(_ body: ArraySlice<UInt8>) {
        let value: JSONValue
        do {
            value = try body.withUnsafeBytes { try JSONValue(parsing: $0) }
        } catch {
            singles.append(Single(id: .null, mustBeError: true))
            return
        }
        guard case .array(let elements) = value else {
            if let single = owed(by: value, inBatch: false) { singles.append(single) }
            return
        }
        guard !elements.isEmpty, elements.count <= maxBatchLength else {
            singles.append(Single(id: .null, mustBeError: true))
            return
        }
        let ids = elements.compactMap { owed(by: $0, inBatch: true)?.id }
        if !ids.isEmpty { batches.append(ids) }
    }

    /// The answer one message owes, if any.
    private mutating func owed(by value: JSONValue, inBatch: Bool) -> Single? {
        guard case .object(let members) = value else { return Single(id: .null, mustBeError: true) }
        var id: JSONValue?
        if let raw = members["id"] {
            switch raw {
            case .integer, .string: id = raw
            default: return Single(id: .null, mustBeError: true)
            }
        }
        guard members["jsonrpc"] == .string("2.0") else { return Single(id: id ?? .null, mustBeError: true) }
        guard let method = members["method"] else {
            if members["result"] != nil || members["error"] != nil { return nil }
            return Single(id: id ?? .null, mustBeError: true)
        }
        guard case .string(let name) = method else { return Single(id: id ?? .null, mustBeError: true) }
        switch members["params"] {
        case nil, .object?, .array?: break
        default: return Single(id: id ?? .null, mustBeError: true)
        }
        guard let id else { return nil }
        calls.append(Call(
            id: id, method: name, handle: members["params"]?["viewModel"]?.stringValue, sequence: calls.count,
            inBatch: inBatch))
        return Single(id: id, mustBeError: false)
    }
}
