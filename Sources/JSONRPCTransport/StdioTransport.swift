import CMainQueue
import JSONRPC
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Serves a ``Connection`` over a pair of file descriptors (stdin and stdout) from one `poll()` loop on
/// the main thread.
///
/// The loop waits on the input, on the output when bytes are pending, and on the main thread's jobs (the
/// main dispatch queue, and the queue it takes over from ``MainQueueTaskExecutor`` and ``MainQueue`` while
/// it runs), and for the sleeps of ``MainLoopClock`` (its own deadlines, on the jobs' descriptor), so the main
/// actor's tasks run on this same thread between reads: no thread hand-off per request or per timer, and no
/// polling with sleeps. Jobs that the main thread queues for itself run without a poll in
/// between (up to ``maxRunsWithoutPoll`` rounds in a row, so that the input and the main dispatch queue
/// are still looked at) and without a descriptor written per job; what each round answered is written
/// before the next one runs (a commit's sync then waits behind the patches already made). When the loop
/// would poll it first runs the connection's ``Connection/beforeWaiting`` (the host's flush of changed
/// state, as a run loop's "before waiting" observers do), so the states one chain of jobs passed through
/// leave as one notification, and a state that lasts while the server waits leaves as it waits. Output the outbox
/// holds for its barrier (what a server says after a commit that its log sync has not yet covered) is let go
/// when the loop would poll (out of jobs, or after the rounds above): it passes the barrier (syncs, once for
/// every commit since) instead of polling with output held. Everything one
/// read brings is parsed and dispatched in one main-actor turn, and the answers go out with one `write`.
/// Input is not read while too much output is pending or too many requests are in flight, so memory is
/// bounded by that window rather than by how fast the client writes.
///
/// The loop only performs what a ``StdioTransportMachine`` decides (which holds every rule above, and is
/// tested without descriptors or a clock): it reads, writes, polls and reads the clock.
public final class StdioTransport {
    /// Tunables: the machine's.
    public typealias Configuration = StdioTransportMachine.Configuration

    private let input: Int32
    private let output: Int32
    private let configuration: Configuration
    private let logger: Logger
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var outputIsNonBlocking = false
    /// The descriptor that a job queued while the loop sleeps makes readable.
    private var jobsDescriptor: Int32 = -1
    /// The nearest sleep of ``MainLoopClock`` that the jobs' descriptor is armed to wake the loop for; nil
    /// when none is (the descriptor was readable since, or no sleep waits).
    private var armedDeadline: Int64?
    /// Rounds of queued jobs run since the last poll.
    private var runsWithoutPoll = 0

    /// How many rounds of jobs (each the jobs queued when it starts) run one after another before the loop
    /// polls, even though jobs are queued: one action's chain of jobs is about 6 rounds.
    static let maxRunsWithoutPoll = 16

    /// A transport reading `input` and writing `output`.
    ///
    /// - Parameters:
    ///   - input: the descriptor to read requests from (stdin).
    ///   - output: the descriptor to write answers to (a duplicate of stdout).
    ///   - configuration: framing, limits and the drain timeout.
    ///   - logger: the stderr log channel.
    public init(input: Int32, output: Int32, configuration: Configuration, logger: Logger) {
        self.input = input
        self.output = output
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs until the client is gone (end of input: exit code 0) or sends `exit` (0 after `shutdown`,
    /// 1 otherwise). Call on the main thread.
    ///
    /// - Parameter connection: the connection to serve.
    /// - Returns: the exit code.
    @MainActor
    public func run(_ connection: Connection) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        outputIsNonBlocking = makeNonBlockingIfPipe(output)
        jobsDescriptor = cmq_take_over_jobs()
        MainLoopTimers.shared.takeOver()
        defer {
            MainLoopTimers.shared.giveBack()
            // Disarmed, so that the next loop to take the queue over (a test's) is not woken by this one's.
            cmq_arm_wake(-1)
            armedDeadline = nil
            cmq_give_back_jobs()
        }
        connection.runsBeforeWaiting = true
        defer { connection.runsBeforeWaiting = false }
        var machine = StdioTransportMachine(configuration: configuration)
        while true {
            let status = StdioTransportMachine.Status(of: connection)
            switch machine.nextAction(status, now: Self.now()) {
            case .dispatch(let frame, let framing):
                connection.receive(frame, framing: framing)
            case .runMainQueue:
                _ = cmq_run_jobs()
            case .writeOutput:
                if !write(connection.outbox) { machine.handle(.outputClosed, now: Self.now()) }
            case .wait(let wait):
                guard self.wait(wait, machine: &machine, connection: connection) else { return 1 }
            case .exit(let code, let reason):
                log(reason, status)
                return code
            }
        }
    }

    /// Polls as `wait` says, runs the main queue when it has jobs, and reports to `machine` what happened
    /// to the input. Returns false when `poll` failed.
    @MainActor
    private func wait(_ wait: StdioTransportMachine.Wait, machine: inout StdioTransportMachine, connection: Connection) -> Bool {
        let outbox = connection.outbox
        // Jobs this thread queued (an action's next step, its commit): run them now, the machine writes what
        // they answered, and asks again.
        if runsWithoutPoll < Self.maxRunsWithoutPoll, cmq_jobs_queued() {
            runsWithoutPoll += 1
            _ = cmq_run_jobs()
            return true
        }
        // The loop would poll: what the jobs changed is sent now (state notifications, coalesced), and when
        // that queued output the machine writes it first (then this point is reached again, with nothing left).
        if connection.runBeforeWaiting() { return true }
        // Output held for its barrier (a commit's sync), and the loop would poll (no jobs left, or the rounds
        // without a poll used up: jobs that keep coming do not hold it longer): pass it (sync once for every
        // commit so far), and the machine writes it.
        // Still held after the pass (a commit under way on another thread, which the sync may have missed): poll,
        // and the commit's caller, resumed on this thread, wakes the loop to pass it again.
        if outbox.heldCount > 0, let barrier = outbox.barrier {
            barrier.pass()
            if outbox.heldCount == 0 { return true }
        }
        runsWithoutPoll = 0
        // A hang-up is watched with no events: POLLHUP is reported whatever the events.
        var descriptors = [
            pollfd(fd: cmq_main_queue_fd(), events: Int16(POLLIN), revents: 0),
            pollfd(fd: jobsDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(
                fd: wait.readInput || wait.watchInputHangUp ? input : -1, events: wait.readInput ? Int16(POLLIN) : 0,
                revents: 0),
            pollfd(fd: wait.writeOutput && outputIsNonBlocking ? output : -1, events: Int16(POLLOUT), revents: 0),
        ]
        // The nearest sleep of `MainLoopClock` wakes the loop through the jobs' descriptor, armed again only
        // when that deadline changes (about 50 times a second for the change feed's poll; a `poll` timeout
        // would arm a kernel timer at every call, ~0.4 µs a round trip here). Armed before the loop may sleep,
        // so that a job's wake is never replaced.
        let nextSleep = MainLoopTimers.shared.nextDeadline
        if nextSleep != armedDeadline { arm(for: nextSleep) }
        // Jobs still queued after the rounds above: look at the rest without blocking. Else sleep until the
        // machine's deadline, a job or the nearest sleep.
        let timeout = cmq_will_sleep() ? wait.deadline.map { Self.milliseconds(from: Self.now(), to: $0) } ?? -1 : 0
        let polled = poll(&descriptors, nfds_t(descriptors.count), timeout)
        let pollError = errno
        let jobsDescriptorReady = polled > 0 && descriptors[1].revents != 0
        cmq_woke(jobsDescriptorReady)
        if jobsDescriptorReady { armedDeadline = nil }  // expired, or replaced by a job's wake
        // The tasks of the sleeps that ended are queued, to run in the next rounds.
        MainLoopTimers.shared.fireDue()
        if polled < 0 {
            if pollError == EINTR { return true }
            logger.error("poll failed", metadata: ["errno": "\(pollError)"])
            return false
        }
        if descriptors[0].revents != 0 {
            cmq_drain_main_queue()
        } else {
            _ = cmq_run_jobs()
        }
        guard descriptors[2].revents != 0 else { return true }
        if !wait.readInput {
            logger.debug("the client closed its input while its output is full")
            machine.handle(.inputHungUp, now: Self.now())
            return true
        }
        let count = readBuffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if count > 0 {
            machine.handle(.inputReceived(readBuffer[..<count]), now: Self.now())
        } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
            logger.debug("end of input")
            machine.handle(.inputEnded, now: Self.now())
        }
        return true
    }

    /// Writes what the output takes now of what the outbox lets go (all of it when the output is blocking).
    /// Returns false when the reader is gone.
    @MainActor
    private func write(_ outbox: Outbox) -> Bool {
        while case let count = outbox.writableCount, count > 0 {
            let written = outbox.pending.withUnsafeBytes { Glibc.write(output, $0.baseAddress, count) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { return true }
                return false
            }
            outbox.consume(written)
        }
        outbox.noteWritten()
        return true
    }

    /// Logs why the session ends, unless it ended normally.
    private func log(_ reason: StdioTransportMachine.ExitReason, _ status: StdioTransportMachine.Status) {
        let metadata: Logger.Metadata = [
            "pendingBytes": "\(status.pendingOutputBytes)", "inFlight": "\(status.requestsInFlight)",
        ]
        switch reason {
        case .finished: break
        case .drainTimedOut: logger.warning("gave up delivering output after the end of input", metadata: metadata)
        case .clientHungUp: logger.warning("the client closed its input and reads no output; exiting", metadata: metadata)
        case .outputClosed: logger.info("the client closed its end of the output; exiting")
        }
    }

    /// Sets O_NONBLOCK on a pipe or socket (a terminal or file stays blocking). Returns whether it did.
    private func makeNonBlockingIfPipe(_ descriptor: Int32) -> Bool {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFIFO || kind == S_IFSOCK else { return false }
        let flags = fcntl(descriptor, F_GETFL)
        return flags >= 0 && fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0
    }

    /// The time on the monotonic clock (`CLOCK_MONOTONIC`), the clock of the timers' deadlines too.
    private static func now() -> Duration {
        .nanoseconds(MainLoopTimers.monotonicNanoseconds())
    }

    /// Arms the jobs' descriptor to become readable at `deadline` (monotonic nanoseconds; at once if it has
    /// passed), or disarms it.
    private func arm(for deadline: Int64?) {
        cmq_arm_wake(deadline.map { max(0, $0 - MainLoopTimers.monotonicNanoseconds()) } ?? -1)
        armedDeadline = deadline
    }

    /// The `poll` timeout from `now` to `deadline`: whole milliseconds, rounded up so that the wait does not
    /// end just before the deadline; 0 once it has passed.
    private static func milliseconds(from now: Duration, to deadline: Duration) -> Int32 {
        let remaining = (deadline - now) / .milliseconds(1)
        return remaining <= 0 ? 0 : Int32(min(remaining.rounded(.up), Double(Int32.max)))
    }
}
