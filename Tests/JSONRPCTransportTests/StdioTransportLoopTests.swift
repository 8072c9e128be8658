import Foundation
import JSON
import JSONRPC
import Logging
import Synchronization
import Testing
@testable import JSONRPCTransport

#if canImport(Glibc)
import Glibc
#endif

extension MainThreadJobTests {
    /// `StdioTransport.run` itself, in this process over real pipes, with a client on a thread of its own: the
    /// loop's `poll` waits for the sleeps of `MainLoopClock`, and input is still read while the main thread's
    /// jobs keep coming (the rounds without a poll are capped).
    @MainActor @Suite struct StdioTransportLoopTests {
        @Test func aSleepOnTheLoopsClockEndsAtItsDeadlineWhileTheLoopWaits() throws {
            let connection = Self.connection()
            connection.register(Self.method("nap"), handler: .task { _ in
                let onTheLoop = MainLoopTimers.aLoopRuns.load(ordering: .acquiring)
                let clock = MainLoopClock()
                let start = clock.now
                try await clock.sleep(for: .milliseconds(30))
                let slept = start.duration(to: clock.now)
                return ["onTheLoop": .bool(onTheLoop), "atLeast30ms": .bool(slept >= .milliseconds(30))]
            })
            let answers = try Self.serve(connection, requests: [#"{"jsonrpc":"2.0","id":2,"method":"nap"}"#])
            #expect(answers[2]?["result"] == ["onTheLoop": true, "atLeast30ms": true])
        }

        @Test func aSleepStartedOnAnotherThreadWakesTheLoopAndEnds() throws {
            let connection = Self.connection()
            connection.register(Self.method("nap"), handler: .task { _ in
                let slept = try await Task.detached {
                    let clock = MainLoopClock()
                    let start = clock.now
                    try await clock.sleep(for: .milliseconds(30))
                    return start.duration(to: clock.now)
                }.value
                return ["atLeast30ms": .bool(slept >= .milliseconds(30))]
            })
            let answers = try Self.serve(connection, requests: [#"{"jsonrpc":"2.0","id":2,"method":"nap"}"#])
            #expect(answers[2]?["result"] == ["atLeast30ms": true])
        }

        @Test func inputIsReadWhileTheMainThreadsJobsKeepComing() throws {
            let connection = Self.connection()
            // Far more jobs than the client needs to be scheduled and write (a few seconds of them): without
            // the cap on rounds without a poll, `count` would be read only after the last.
            let chain = Self.registerJobChain(on: connection)
            // The loop also comes to its "before waiting" point while the jobs keep coming (when it polls
            // after the capped rounds): changed state is not held back until they stop.
            let seenWhileRunning = Mutex(false)
            connection.beforeWaiting = {
                if chain.runs > 0 && chain.isRunning { seenWhileRunning.withLock { $0 = true } }
            }
            let answers = try Self.serve(connection, requests: [
                #"{"jsonrpc":"2.0","id":2,"method":"spin"}"#, #"{"jsonrpc":"2.0","id":3,"method":"count"}"#,
            ], oneAtATime: true)
            chain.stop()
            let runs = try #require(answers[3]?["result"]?.integerValue)
            #expect(runs > 0 && runs < 20_000_000)
            #expect(seenWhileRunning.withLock { $0 })
        }

        /// Registers `spin`, which starts a chain of 20 million jobs of the main thread (a few seconds of them),
        /// and `count`, which stops it and answers how many ran.
        static func registerJobChain(on connection: Connection) -> JobChain {
            let chain = JobChain(limit: 20_000_000)
            connection.register(Self.method("spin"), handler: .immediate { _ in
                chain.start()
                return [:]
            })
            connection.register(Self.method("count"), handler: .immediate { _ in
                chain.stop()
                return .integer(Int64(chain.runs))
            })
            return chain
        }

        /// Jobs of the main thread that queue the next one until stopped or `limit` have run.
        final class JobChain: Sendable {
            private let state = Mutex((runs: 0, stopped: false))
            let limit: Int

            init(limit: Int) { self.limit = limit }

            var runs: Int { state.withLock { $0.runs } }
            /// Whether the chain still queues jobs (not stopped, and under its limit).
            var isRunning: Bool { state.withLock { !$0.stopped && $0.runs < limit } }

            func start() { MainQueue.async { self.step() } }

            func stop() { state.withLock { $0.stopped = true } }

            private func step() {
                let goesOn = state.withLock { state in
                    state.runs += 1
                    return !state.stopped && state.runs < limit
                }
                if goesOn { MainQueue.async { self.step() } }
            }
        }

        @Test func beforeWaitingRunsOnceTheQueuedJobsHaveRunAndWhatItSendsIsWritten() throws {
            let connection = Self.connection()
            let chain = JobChain(limit: 5)
            connection.register(Self.method("chain"), handler: .immediate { _ in
                chain.start()
                return [:]
            })
            // What the chain had run each time the loop came to wait; a notification for each new count.
            let seen = Mutex<[Int]>([])
            connection.beforeWaiting = { [unowned connection] in
                #expect(connection.runsBeforeWaiting)
                let runs = chain.runs
                let isNew = seen.withLock { seen in
                    guard seen.last != runs else { return false }
                    seen.append(runs)
                    return true
                }
                if isNew { connection.notify("test/flushed", params: ["runs": .integer(Int64(runs))]) }
            }
            // The client waits for the second notification without sending anything more: unless the loop
            // writes what the hook sent before it polls, it would wait for input with that notification held.
            let served = try Self.serve(
                connection, requests: [#"{"jsonrpc":"2.0","id":2,"method":"chain"}"#], oneAtATime: true, notifications: 2)
            #expect(served.answers[2]?["result"] == [:])
            // Never while the chain's jobs were queued (each queues the next): before it, and after its last.
            #expect(seen.withLock { $0 } == [0, 5])
            #expect(served.notifications.map { $0["params"]?["runs"] } == [0, 5])
            #expect(!connection.runsBeforeWaiting, "only while the transport serves")
        }

        @Test func outputHeldForItsBarrierIsLetGoByPassingItOnceTheJobsAreDone() throws {
            let connection = Self.connection()
            let barrier = CountingBarrier()
            connection.outbox.barrier = barrier
            // Each answer is enqueued after a "commit" the barrier has not passed: without the loop passing
            // it, the answers would stay held and the client would give up.
            connection.register(Self.method("commit"), handler: .task { _ in
                barrier.commit()
                return .integer(Int64(barrier.required))
            })
            let answers = try Self.serve(connection, requests: [
                #"{"jsonrpc":"2.0","id":2,"method":"commit"}"#, #"{"jsonrpc":"2.0","id":3,"method":"commit"}"#,
            ], oneAtATime: true)
            #expect(answers[2]?["result"] == 1)
            #expect(answers[3]?["result"] == 2)
            // One pass per held answer (nothing else was held), each when the loop had run out of jobs.
            #expect(barrier.passes == 2)
            #expect(barrier.reached == 2)
        }

        @Test func heldOutputIsLetGoWhileTheMainThreadsJobsKeepComing() throws {
            let connection = Self.connection()
            let barrier = CountingBarrier()
            connection.outbox.barrier = barrier
            // As above: without a pass once the rounds without a poll are used up, the commit's answer would
            // leave only after the last of these jobs, and `count` would be read after them.
            let chain = Self.registerJobChain(on: connection)
            connection.register(Self.method("commit"), handler: .immediate { _ in
                barrier.commit()
                return .integer(Int64(barrier.required))
            })
            let answers = try Self.serve(connection, requests: [
                #"{"jsonrpc":"2.0","id":2,"method":"spin"}"#, #"{"jsonrpc":"2.0","id":3,"method":"commit"}"#,
                #"{"jsonrpc":"2.0","id":4,"method":"count"}"#,
            ], oneAtATime: true)
            chain.stop()
            #expect(answers[3]?["result"] == 1)
            let runs = try #require(answers[4]?["result"]?.integerValue)
            #expect(runs > 0 && runs < 20_000_000)
        }

        @Test func outputStillHeldAfterAPassWaitsForTheNextWakeInsteadOfSpinning() throws {
            let connection = Self.connection()
            let barrier = CountingBarrier()
            barrier.holdUntilReleased()
            connection.outbox.barrier = barrier
            // The "commit" is under way on another thread: a pass does not pass it until the thread lets it go and
            // wakes the loop (as a writer-queue commit's caller, resumed on the main thread, does).
            barrier.onBlockedPass = {
                Thread.detachNewThread {
                    barrier.release()
                    MainQueue.async {}
                }
            }
            connection.register(Self.method("commit"), handler: .immediate { _ in
                barrier.commit()
                return .integer(Int64(barrier.required))
            })
            let answers = try Self.serve(connection, requests: [#"{"jsonrpc":"2.0","id":2,"method":"commit"}"#], oneAtATime: true)
            #expect(answers[2]?["result"] == 1)
            // One pass that could not pass, one after the wake: a loop that passed again at once, without
            // waiting, would have passed thousands of times before the thread ran.
            #expect(barrier.passes >= 2 && barrier.passes < 10)
        }

        /// A barrier whose generations are "commits" the test makes, passed only by `pass()`.
        /// (Or, after `holdUntilReleased()`, only once `release()` was called: `onBlockedPass` is called at each
        /// pass before that.)
        final class CountingBarrier: OutputBarrier, @unchecked Sendable {
            private let state = Mutex((required: UInt64(0), reached: UInt64(0), passes: 0, blocked: false))
            /// Set before the loop runs; called outside the lock.
            var onBlockedPass: (@Sendable () -> Void)?
            var required: UInt64 { state.withLock { $0.required } }
            var reached: UInt64 { state.withLock { $0.reached } }
            var passes: Int { state.withLock { $0.passes } }
            func commit() { state.withLock { $0.required += 1 } }
            func holdUntilReleased() { state.withLock { $0.blocked = true } }
            func release() { state.withLock { $0.blocked = false } }
            func pass() {
                let blocked = state.withLock { state -> Bool in
                    state.passes += 1
                    if !state.blocked { state.reached = state.required }
                    return state.blocked
                }
                if blocked, let onBlockedPass {
                    self.onBlockedPass = nil
                    onBlockedPass()
                }
            }
        }

        static func connection() -> Connection {
            let connection = Connection(
                identity: ServerIdentity(name: "test", version: "1", protocolVersion: "1"), outbox: Outbox(),
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            connection.taskExecutor = MainQueueTaskExecutor.shared
            return connection
        }

        static func method(_ name: String) -> MethodDescription {
            MethodDescription(name: name, summary: "A test's.", result: ["name": "Any", "schema": [:]])
        }

        /// Runs `connection` over pipes on this thread until a client thread has sent `initialize` and
        /// `requests` (each after the last one's answer when `oneAtATime`), read every answer and closed the
        /// input; returns the answers by id. The client gives up after 20 s without an answer.
        static func serve(_ connection: Connection, requests: [String], oneAtATime: Bool = false) throws -> [Int64: JSONValue] {
            try serve(connection, requests: requests, oneAtATime: oneAtATime, notifications: 0).answers
        }

        /// As ``serve(_:requests:oneAtATime:)``, and the client reads on after the last answer until
        /// `notifications` notifications have come (or 20 s without one); returns them too, in order.
        static func serve(
            _ connection: Connection, requests: [String], oneAtATime: Bool = false, notifications expected: Int
        ) throws -> (answers: [Int64: JSONValue], notifications: [JSONValue]) {
            var input: [Int32] = [0, 0]
            var output: [Int32] = [0, 0]
            guard pipe(&input) == 0, pipe(&output) == 0 else { throw POSIXError(.EIO) }
            let answers = Mutex([Int64: JSONValue]())
            let notifications = Mutex([JSONValue]())
            let (clientReads, clientWrites) = (output[0], input[1])
            let client = Thread {
                defer {
                    close(clientWrites)
                    close(clientReads)
                }
                var pending = [UInt8]()
                func send(_ line: String) { _ = (line + "\n").utf8CString.withUnsafeBufferPointer { write(clientWrites, $0.baseAddress, $0.count - 1) } }
                func awaitAnswers(_ count: Int, notifications expected: Int = 0) {
                    while answers.withLock({ $0.count }) < count || notifications.withLock({ $0.count }) < expected {
                        var descriptor = pollfd(fd: clientReads, events: Int16(POLLIN), revents: 0)
                        guard poll(&descriptor, 1, 20_000) == 1 else { return }
                        var buffer = [UInt8](repeating: 0, count: 65_536)
                        let count = read(clientReads, &buffer, buffer.count)
                        guard count > 0 else { return }
                        pending += buffer[..<count]
                        while let end = pending.firstIndex(of: 0x0A) {
                            let line = Array(pending[..<end])
                            pending.removeSubrange(...end)
                            guard let message = try? JSONValue(parsing: line) else { continue }
                            if let id = message["id"]?.integerValue {
                                answers.withLock { $0[id] = message }
                            } else if message["method"] != nil {
                                notifications.withLock { $0.append(message) }
                            }
                        }
                    }
                }
                send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
                awaitAnswers(1)
                for (index, request) in requests.enumerated() {
                    send(request)
                    if oneAtATime { awaitAnswers(index + 2) }
                }
                awaitAnswers(requests.count + 1, notifications: expected)
            }
            client.start()
            let transport = StdioTransport(
                input: input[0], output: output[1], configuration: .init(),
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            _ = transport.run(connection)
            close(input[0])
            close(output[1])
            return (answers.withLock { $0 }, notifications.withLock { $0 })
        }
    }
}
