import JSON
import JSONPatch
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A client of a ``ServerProcess`` that numbers its requests, keeps every response it has read, and
/// keeps a mirror of each opened ViewModel by applying its `viewModel/changed` notifications in order.
///
/// A notification whose version is not exactly one above the mirror's, or whose patch does not apply,
/// fails the test: the server never skips a version.
@MainActor
final class MirroringClient {
    /// One opened ViewModel as the client knows it.
    struct Mirror {
        var version: Int64
        var state: JSONValue
    }

    let server: ServerProcess
    let framing: WireFraming
    private(set) var mirrors: [String: Mirror] = [:]
    /// Responses read and not yet taken, by id.
    private var responses: [Int64: JSONValue] = [:]
    /// Notifications applied so far.
    private(set) var notificationCount = 0
    private var nextID: Int64 = 1
    /// Every message read, in order, once a test sets it (to `[]`): for checks over everything the server
    /// said (that no secret ever appears, say). Nil: nothing is kept.
    var transcript: [JSONValue]?

    init(_ server: ServerProcess, framing: WireFraming = .ndjson) {
        self.server = server
        self.framing = framing
    }

    /// The request `{"jsonrpc":"2.0","id":id,"method":method,"params":params}` as text, with a new id.
    func request(_ method: String, _ params: JSONValue = [:]) -> (id: Int64, text: String) {
        let id = nextID
        nextID += 1
        let message: JSONValue = ["jsonrpc": "2.0", "id": .integer(id), "method": .string(method), "params": params]
        return (id, message.description)
    }

    /// Writes the requests in one write (pipelined) and returns their ids.
    @discardableResult
    func send(_ calls: [(method: String, params: JSONValue)]) throws -> [Int64] {
        let requests = calls.map { request($0.method, $0.params) }
        try server.send(requests.map(\.text), framing: framing)
        return requests.map(\.id)
    }

    /// Sends one request and returns its response.
    func call(_ method: String, _ params: JSONValue = [:]) throws -> JSONValue {
        let id = try send([(method, params)])[0]
        return try response(to: id)
    }

    /// Sends one request and returns its `result`; an error response fails.
    func result(_ method: String, _ params: JSONValue = [:]) throws -> JSONValue {
        let answer = try call(method, params)
        guard let result = answer["result"] else {
            throw ServerProcessError(description: "\(method) failed: \(answer)")
        }
        return result
    }

    /// Reads messages until the response to `id` has come, and takes it.
    func response(to id: Int64) throws -> JSONValue {
        while responses[id] == nil { try handle(server.receive(framing: framing)) }
        return responses.removeValue(forKey: id)!
    }

    /// The response to `id` if it has been read already (taking it), else nil.
    func takeResponse(_ id: Int64) -> JSONValue? {
        responses.removeValue(forKey: id)
    }

    /// Writes `bytes` from `offset` on as the server takes them, reading and handling every message
    /// meanwhile (each is also passed to `each`), until `done` holds. Reading while writing means that a
    /// server that stops reading until its output is read cannot deadlock the test, whatever the pipe
    /// sizes; a server that neither takes input nor answers for its timeout fails it.
    func exchange(
        _ bytes: [UInt8], from offset: Int = 0, each: (JSONValue) throws -> Void = { _ in }, until done: () -> Bool
    ) throws {
        var written = offset
        var lastProgress = monotonicMilliseconds()
        while !done() {
            if written < bytes.count {
                let count = try server.writeWithoutBlocking(bytes[written...])
                written += count
                if count > 0 { lastProgress = monotonicMilliseconds() }
            }
            let messages = try server.receiveAvailable(framing: framing, waitingMilliseconds: written < bytes.count ? 10 : 1_000)
            for message in messages {
                try handle(message)
                try each(message)
            }
            if !messages.isEmpty {
                lastProgress = monotonicMilliseconds()
                continue
            }
            guard server.isOutputOpen else { throw ServerProcessError(description: "stdout ended; stderr: \(server.errorText)") }
            guard monotonicMilliseconds() - lastProgress < server.timeoutMilliseconds else {
                throw ServerProcessError(description: "the server neither took input nor answered for \(server.timeoutMilliseconds) ms; stderr: \(server.errorText)")
            }
        }
    }

    /// Reads one message and handles it.
    func receiveOne() throws {
        try handle(server.receive(framing: framing))
    }

    /// `initialize`, asking for `stateUpdates` (`patch` or `snapshot`).
    func initialize(stateUpdates: String = "patch") throws {
        _ = try result("initialize", ["clientInfo": ["name": "e2e-resilience"], "capabilities": ["stateUpdates": .string(stateUpdates)]])
    }

    /// Opens a ViewModel and returns its handle; its mirror starts from the state the open returns.
    func open(_ type: String, args: JSONValue = [:]) throws -> String {
        let result = try result("viewModel/open", ["type": .string(type), "args": args])
        guard let handle = result["viewModel"]?.stringValue else { throw ServerProcessError(description: "no handle in \(result)") }
        return handle
    }

    /// Reads messages until `handle`'s mirrored state satisfies `condition`.
    func waitUntil(_ handle: String, _ condition: (JSONValue) -> Bool) throws {
        while !(mirrors[handle].map { condition($0.state) } ?? false) { try receiveOne() }
    }

    /// `viewModel/get` of `handle`: the server's current version and state.
    func get(_ handle: String) throws -> Mirror {
        let result = try result("viewModel/get", ["viewModel": .string(handle)])
        guard let version = result["version"]?.integerValue, let state = result["state"] else {
            throw ServerProcessError(description: "bad viewModel/get result \(result)")
        }
        return Mirror(version: version, state: state)
    }

    /// Applies a notification to its mirror, or keeps a response (an open's result starts a mirror).
    func handle(_ message: JSONValue) throws {
        transcript?.append(message)
        if let id = message["id"]?.integerValue {
            if let result = message["result"], let handle = result["viewModel"]?.stringValue, mirrors[handle] == nil,
               let version = result["version"]?.integerValue, let state = result["state"] {
                mirrors[handle] = Mirror(version: version, state: state)
            }
            responses[id] = message
            return
        }
        guard message["method"] == "viewModel/changed", let params = message["params"],
              let handle = params["viewModel"]?.stringValue, let version = params["version"]?.integerValue
        else {
            throw ServerProcessError(description: "unexpected message \(message)")
        }
        guard var mirror = mirrors[handle] else {
            throw ServerProcessError(description: "a notification for \(handle) before its open answered: \(message)")
        }
        guard version == mirror.version + 1 else {
            throw ServerProcessError(description: "\(handle) went from version \(mirror.version) to \(version)")
        }
        if let state = params["state"] {
            mirror.state = state
        } else if let patch = params["patch"] {
            do {
                mirror.state = try JSONPatch(json: patch).apply(to: mirror.state)
            } catch {
                throw ServerProcessError(description: "\(handle) v\(version): \(error) applying \(patch) to \(mirror.state)")
            }
        } else {
            throw ServerProcessError(description: "a notification without patch or state: \(message)")
        }
        mirror.version = version
        mirrors[handle] = mirror
        notificationCount += 1
    }
}


/// An integer from the environment (e.g. `STOREFRONT_KILLS`), else `fallback`.
func environmentInteger(_ name: String, default fallback: Int) -> Int {
    guard let text = getenv(name).map({ String(cString: $0) }), let value = Int(text) else { return fallback }
    return value
}
