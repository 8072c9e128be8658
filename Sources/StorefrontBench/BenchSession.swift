import JSON
import JSONPatch

/// A JSON-level client over a ``ServerChild``, for the domain measurements: calls by method and params,
/// the notifications that arrive before each answer, and mirrors of open ViewModels kept current by
/// applying their patches (so "the first page is shown" can be observed the way a front end sees it).
final class BenchSession {
    /// A `viewModel/changed` notification as it arrived.
    struct Change {
        var viewModel: String
        var version: Int64
        /// The patch (or, in snapshot mode, the state).
        var message: JSONValue
        /// The size of the notification's body on the wire, without framing.
        var bodyBytes: Int
    }

    /// An answer and what came before it.
    struct Reply {
        var result: JSONValue
        var changes: [Change]
        var nanoseconds: UInt64
    }

    let child: ServerChild
    private var nextID: Int64 = 1
    /// Each open ViewModel's state as the patches so far make it.
    private(set) var mirrors: [String: JSONValue] = [:]

    init(_ child: ServerChild) {
        self.child = child
    }

    /// `initialize`, and returns its result.
    @discardableResult
    func initialize() throws -> JSONValue {
        try call("initialize", ["clientInfo": ["name": "storefront-bench"]]).result
    }

    /// Opens a ViewModel and returns its handle; its mirror starts from the state in the answer.
    func open(_ type: String, _ arguments: JSONValue = [:]) throws -> (handle: String, reply: Reply) {
        let reply = try call("viewModel/open", ["type": .string(type), "args": arguments])
        guard let handle = reply.result["viewModel"]?.stringValue, let state = reply.result["state"] else {
            throw BenchError(description: "viewModel/open \(type) answered \(reply.result)")
        }
        mirrors[handle] = state
        return (handle, reply)
    }

    /// Sends one request and reads until its answer, applying every change on the way. An error answer
    /// throws.
    func call(_ method: String, _ params: JSONValue) throws -> Reply {
        let id = nextID
        nextID += 1
        var bytes: [UInt8] = []
        let message: JSONValue = ["jsonrpc": "2.0", "id": .integer(id), "method": .string(method), "params": params]
        child.framing.frame(message.serializedString(), into: &bytes)
        let start = monotonicNanoseconds()
        try child.write(bytes)
        var changes: [Change] = []
        while true {
            let (message, size) = try readMessage()
            if let change = try apply(message, bodyBytes: size) {
                changes.append(change)
                continue
            }
            guard message["id"] == .integer(id) else {
                throw BenchError(description: "expected the answer to \(method) #\(id), got \(message)")
            }
            if let error = message["error"] { throw BenchError(description: "\(method) failed: \(error)") }
            return Reply(result: message["result"] ?? .null, changes: changes, nanoseconds: monotonicNanoseconds() - start)
        }
    }

    /// Writes one request and returns its id, without reading (for measurements that read several servers
    /// at once: ``takeBuffered()``).
    @discardableResult
    func send(_ method: String, _ params: JSONValue) throws -> Int64 {
        let id = nextID
        nextID += 1
        var bytes: [UInt8] = []
        let message: JSONValue = ["jsonrpc": "2.0", "id": .integer(id), "method": .string(method), "params": params]
        child.framing.frame(message.serializedString(), into: &bytes)
        try child.write(bytes)
        return id
    }

    /// Writes several requests in one write (pipelined) and returns their ids, without reading.
    func sendAll(_ requests: [(method: String, params: JSONValue)]) throws -> [Int64] {
        var bytes: [UInt8] = []
        let ids = requests.map { request in
            let id = nextID
            nextID += 1
            let message: JSONValue = ["jsonrpc": "2.0", "id": .integer(id), "method": .string(request.method), "params": request.params]
            child.framing.frame(message.serializedString(), into: &bytes)
            return id
        }
        try child.write(bytes)
        return ids
    }

    /// The next message already read from the server (a change is applied to its mirror first), or nil
    /// when none is complete; ``ServerChild/readAvailable()`` reads more.
    func takeBuffered() throws -> (message: JSONValue, change: Change?)? {
        guard let body = try child.takeBufferedMessage() else { return nil }
        let message: JSONValue
        do {
            message = try JSONValue(parsing: Array(body))
        } catch {
            throw BenchError(description: "the server wrote bytes that are not JSON: \(String(decoding: body, as: UTF8.self))")
        }
        return (message, try apply(message, bodyBytes: body.count))
    }

    /// Reads from every session in `sessions` as their output arrives, handing each message (changes
    /// already applied to their mirrors) to `handle` with the index of its session, until `done` holds.
    static func pump(
        _ sessions: [BenchSession], until done: () -> Bool,
        _ handle: (_ index: Int, _ message: JSONValue, _ change: Change?) throws -> Void
    ) throws {
        while true {
            for (index, session) in sessions.enumerated() {
                while let (message, change) = try session.takeBuffered() { try handle(index, message, change) }
            }
            if done() { return }
            let readable = try ServerChild.pollReadable(sessions.map(\.child))
            for (index, session) in sessions.enumerated() where readable[index] { try session.child.readAvailable() }
        }
    }

    /// Reads changes until the mirror of `handle` satisfies `predicate`; returns when that was, on the
    /// monotonic clock (at once if it already does).
    func waitUntil(_ handle: String, _ predicate: (JSONValue) -> Bool) throws -> UInt64 {
        while !(mirrors[handle].map(predicate) ?? false) {
            let (message, size) = try readMessage()
            guard try apply(message, bodyBytes: size) != nil else {
                throw BenchError(description: "unexpected message while waiting for \(handle): \(message)")
            }
        }
        return monotonicNanoseconds()
    }

    private func readMessage() throws -> (JSONValue, Int) {
        let body = try child.readMessage()
        do {
            return (try JSONValue(parsing: Array(body)), body.count)
        } catch {
            throw BenchError(description: "the server wrote bytes that are not JSON: \(String(decoding: body, as: UTF8.self))")
        }
    }

    /// Applies `message` to its mirror if it is a change, and returns it; nil for anything else.
    private func apply(_ message: JSONValue, bodyBytes: Int) throws -> Change? {
        guard message["method"] == "viewModel/changed", let params = message["params"],
              let handle = params["viewModel"]?.stringValue, let version = params["version"]?.integerValue
        else { return nil }
        if let state = params["state"] {
            mirrors[handle] = state
        } else if let patch = params["patch"], let mirror = mirrors[handle] {
            mirrors[handle] = try JSONPatch(json: patch).apply(to: mirror)
        }
        return Change(viewModel: handle, version: version, message: params, bodyBytes: bodyBytes)
    }
}
