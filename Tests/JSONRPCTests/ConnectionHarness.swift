import JSON
import JSONRPC
import Logging
import Testing

/// A ``Connection`` with an ``Outbox`` that the test reads back as JSON.
@MainActor
final class ConnectionHarness {
    let outbox = Outbox()
    let connection: Connection

    /// A connection, already past `initialize` unless `initialized` is false.
    init(initialized: Bool = true) {
        var logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        logger.logLevel = .critical
        connection = Connection(
            identity: ServerIdentity(name: "storefront-test", version: "9.8.7", protocolVersion: "2026-01-01"),
            outbox: outbox, logger: logger)
        if initialized {
            send(#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{}}"#)
            _ = takeOutput()
        }
    }

    /// Hands the connection one message body.
    func send(_ text: String) {
        connection.receive(ArraySlice(text.utf8))
    }

    /// Everything written so far, one JSON value per line; the outbox is emptied.
    func takeOutput(sourceLocation: SourceLocation = #_sourceLocation) -> [JSONValue] {
        let bytes = outbox.pending
        outbox.consume(bytes.count)
        #expect(bytes.isEmpty || bytes.last == 0x0A, "output ends inside a line", sourceLocation: sourceLocation)
        return bytes.split(separator: 0x0A).compactMap { line in
            do {
                return try JSONValue(parsing: Array(line))
            } catch {
                Issue.record("unparsable output line \(String(decoding: line, as: UTF8.self)): \(error)", sourceLocation: sourceLocation)
                return nil
            }
        }
    }

    /// Sends `text` and returns the one message written in answer, waiting for tasks to finish.
    func answer(to text: String, sourceLocation: SourceLocation = #_sourceLocation) async -> JSONValue? {
        send(text)
        await settle(sourceLocation: sourceLocation)
        let output = takeOutput(sourceLocation: sourceLocation)
        #expect(output.count == 1, "expected one answer, got \(output)", sourceLocation: sourceLocation)
        return output.first
    }

    /// ``settle(sourceLocation:)`` and ``yield(until:sourceLocation:)`` fail a stuck task only once both
    /// bounds are spent. Turns alone are not enough: a task that wakes on another thread (a cancelled
    /// `Task.sleep` resumes on the global executor before it hops back) needs that thread to be scheduled,
    /// which on a loaded machine can take longer than any fixed number of turns here. Time alone is not
    /// enough either: other suites' synchronous main-actor tests (the end-to-end ones) hold the main
    /// actor for many seconds, during which the clock runs but no task here can.
    static let patience = (turns: 10_000, time: Duration.seconds(30))

    /// Lets the connection's tasks run until none is in flight (bounded, so a stuck task fails the test).
    func settle(sourceLocation: SourceLocation = #_sourceLocation) async {
        await yield(until: { connection.inFlightCount == 0 }, what: "requests still in flight", sourceLocation: sourceLocation)
    }

    /// Lets the connection's tasks run until `condition` holds (bounded, so a stuck task fails the test).
    func yield(
        until condition: () -> Bool, what: String = "the condition never held", sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let deadline = ContinuousClock.now + Self.patience.time
        var turns = 0
        while !condition(), turns < Self.patience.turns || ContinuousClock.now < deadline {
            await Task.yield()
            turns += 1
        }
        #expect(condition(), "\(what)", sourceLocation: sourceLocation)
    }

    /// Lets already-started tasks run to their first suspension point (for checks that must hold whether
    /// or not they have).
    func yieldToTasks() async {
        for _ in 0..<100 { await Task.yield() }
    }
}

/// A success response.
func result(_ result: JSONValue, id: JSONValue) -> JSONValue {
    ["jsonrpc": "2.0", "id": id, "result": result]
}

/// The `error` member's code and the id of an error response.
func errorCode(of response: JSONValue?) -> Int64? {
    response?["error"]?["code"]?.integerValue
}

/// A gate that handler tasks wait on until the test opens it.
@MainActor
final class Gate {
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private(set) var isOpen = false

    var waiting: Int { waiters.count }

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        let resumed = waiters
        waiters = []
        for waiter in resumed { waiter.resume() }
    }
}
