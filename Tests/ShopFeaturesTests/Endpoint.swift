import Foundation
import Testing

/// One method of a service double: records its calls and answers with what the test set up.
/// A call nobody set up fails the test.
final class Endpoint<Input: Sendable, Output: Sendable>: @unchecked Sendable {
    private let name: String
    private let lock = NSLock()
    private var handler: (@Sendable (Input) async throws -> Output)?
    private var recorded: [Input] = []

    init(_ name: String) {
        self.name = name
    }

    /// The inputs of every call so far.
    var calls: [Input] { lock.withLock { recorded } }

    /// Answers every call with `handler`.
    func handle(_ handler: @escaping @Sendable (Input) async throws -> Output) {
        lock.withLock { self.handler = handler }
    }

    /// Answers every call with `value`.
    func returns(_ value: Output) {
        handle { _ in value }
    }

    /// Fails every call with `error`.
    func fails(_ error: any Error) {
        handle { _ in throw error }
    }

    func callAsFunction(_ input: Input) async throws -> Output {
        let handler = lock.withLock {
            recorded.append(input)
            return self.handler
        }
        guard let handler else {
            Issue.record("Unexpected call to \(name) with \(input)")
            throw UnexpectedCall()
        }
        return try await handler(input)
    }
}

struct UnexpectedCall: Error {}

/// Holds calls until the test opens it.
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Returns once the gate is open.
    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = lock.withLock {
                if isOpen { return true }
                waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Lets every waiting and future call through.
    func open() {
        let waiting = lock.withLock {
            isOpen = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    /// How many calls are waiting.
    var waiting: Int { lock.withLock { waiters.count } }
}
