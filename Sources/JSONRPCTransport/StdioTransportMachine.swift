import JSONRPC

/// The rules of the stdio transport as a value: events in, actions out, time passed in by the caller.
///
/// It knows no descriptor, clock or actor, so a test or the fuzz harness drives it as ``StdioTransport``'s
/// `poll()` loop does and moves time itself. It owns the ``FrameDecoder``; the connection it serves is
/// seen only through the ``Status`` the driver passes to ``nextAction(_:now:)``. The driver performs each
/// action (``Action``), reports what happened with ``handle(_:now:)``, and asks again.
///
/// The rules:
/// - **Flow control.** Frames are dispatched one at a time while fewer than
///   ``Configuration/maxPendingOutputBytes`` wait to be written and fewer than
///   ``Configuration/maxInFlightRequests`` requests are in flight; the rest wait in the decoder, and no
///   input is read while any wait. After frames are dispatched the jobs they queued run (the tasks they
///   started, up to their first suspension, so that quick answers leave in the same write) and the output
///   is written.
/// - **End of input.** The last frame (an ndjson line without its `\n`, or the error for a cut frame) is
///   dispatched; then the machine exits once nothing is in flight and nothing waits to be written, or when
///   ``Configuration/drainTimeout`` has passed.
/// - **`exit`.** Once the connection has an exit code, no more input is read and the same drain follows;
///   the process exits with that code (with 0 after end of input without `exit`).
/// - **Hang-up while the output is full.** Input is not read then, so its end would go unseen: the
///   driver watches it for a hang-up instead. After one, the client has the drain timeout to read again
///   before the machine gives up; if it reads again, the input is read to its end as usual.
/// - **Output closed.** When the reader of the output is gone, the machine exits at once.
/// - **Held output.** Bytes the outbox holds back (``Status/writableOutputBytes`` counts the others) are not
///   written nor waited to be writable; they count for flow control and for the drain. The driver lets them
///   go (``StdioTransport`` passes the outbox's barrier whenever it would poll while holding output: when it
///   runs out of jobs, and after its rounds of jobs without a poll are used up).
public struct StdioTransportMachine: Sendable {
    /// Tunables.
    public struct Configuration: Sendable, Equatable {
        /// Which framing to accept.
        public var framing: FramingChoice = .auto
        /// The largest message accepted, in bytes.
        public var maxMessageBytes = 16 * 1024 * 1024
        /// Stop dispatching (and reading) while at least this many bytes wait to be written.
        public var maxPendingOutputBytes = 4 * 1024 * 1024
        /// Stop dispatching (and reading) while this many requests are in flight.
        public var maxInFlightRequests = 4_096
        /// After end of input, `exit` or a hang-up, how long to keep trying to deliver pending output.
        public var drainTimeout: Duration = .seconds(5)

        /// The defaults.
        public init() {}
    }

    /// What the driver saw happen to the input or the output.
    public enum Event: Equatable, Sendable {
        /// A read brought these bytes.
        case inputReceived(ArraySlice<UInt8>)
        /// A read found the end of the input (or failed).
        case inputEnded
        /// The input, watched while not read (``Wait/watchInputHangUp``), was closed by the client.
        case inputHungUp
        /// A write found the reader of the output gone.
        case outputClosed
    }

    /// Whether the input is read, and until when the client is waited for once it is not.
    private enum Input: Equatable, Sendable {
        /// Read whenever there is room.
        case open
        /// The client closed it while it was not being read; give up at `deadline` unless it reads again.
        case hungUp(deadline: Duration)
        /// Ended or closed by `exit`: drain, and exit by `deadline` at the latest.
        case closed(deadline: Duration)
    }

    /// The tunables in use.
    public let configuration: Configuration
    private var decoder: FrameDecoder
    private var input = Input.open
    /// Whether the decoder may hold whole frames not yet dispatched.
    private var holdsFrames = false
    /// Whether the input has ended and the decoder has yet to say what its unfinished bytes were.
    private var finishPending = false
    /// Whether what the last read brought is to be dispatched before anything else.
    private var dispatchingInput = false
    /// Whether frames were dispatched since the main queue last ran.
    private var dispatchedSinceRun = false
    /// Whether pending output is to be written (once a wait is over, and after the main queue ran).
    private var writeDue = false
    private var outputClosed = false

    /// A machine at the start of a session, before any input.
    public init(configuration: Configuration) {
        self.configuration = configuration
        decoder = FrameDecoder(choice: configuration.framing, maxMessageBytes: configuration.maxMessageBytes)
    }

    /// Records what the driver saw. Input events are expected only after a ``Wait`` that asked to read
    /// the input (``Event/inputHungUp`` after one that asked to watch it); input after the input was closed
    /// is dropped.
    ///
    /// - Parameters:
    ///   - event: what happened.
    ///   - now: the time on the driver's monotonic clock (any fixed origin).
    public mutating func handle(_ event: Event, now: Duration) {
        switch event {
        case .inputReceived(let bytes):
            if case .closed = input { return }
            bytes.withUnsafeBytes { decoder.append($0) }
            holdsFrames = true
            dispatchingInput = true
        case .inputEnded:
            if case .closed = input { return }
            finishPending = true
            dispatchingInput = true
            input = .closed(deadline: now + configuration.drainTimeout)
        case .inputHungUp:
            guard input == .open else { return }
            input = .hungUp(deadline: now + configuration.drainTimeout)
        case .outputClosed:
            outputClosed = true
        }
    }

    /// What to do next. Perform it, then ask again with the connection's new status (after a ``Action/wait(_:)``,
    /// once the wait is over and its events are handled).
    ///
    /// - Parameters:
    ///   - status: the connection's status now.
    ///   - now: the time on the driver's monotonic clock (any fixed origin).
    /// - Returns: the next action.
    public mutating func nextAction(_ status: Status, now: Duration) -> Action {
        if outputClosed { return .exit(code: status.exitCode ?? 0, reason: .outputClosed) }
        // What a read brought, first: everything there is room for goes out in one turn and one write.
        if dispatchingInput {
            if let frame = nextFrame(status) {
                dispatchedSinceRun = true
                return frame
            }
            dispatchingInput = false
        }
        if dispatchedSinceRun {
            // Run the tasks those frames started up to their first suspension: quick answers join the write.
            dispatchedSinceRun = false
            writeDue = true
            return .runMainQueue
        }
        if writeDue {
            writeDue = false
            if status.writableOutputBytes > 0 { return .writeOutput }
        }
        // Frames held back for want of room, now that a write or an answer may have made some.
        if let frame = nextFrame(status) {
            dispatchedSinceRun = true
            return frame
        }
        if status.exitCode != nil {
            closeInput(now: now)
        }
        if case .closed(let deadline) = input {
            if status.requestsInFlight == 0, status.pendingOutputBytes == 0 {
                return .exit(code: status.exitCode ?? 0, reason: .finished)
            }
            if now >= deadline { return .exit(code: status.exitCode ?? 0, reason: .drainTimedOut) }
        }
        let readInput = isOpenOrHungUp && !holdsFrames && !finishPending && hasRoom(status)
        if readInput { input = .open }
        if case .hungUp(let deadline) = input, now >= deadline {
            return .exit(code: status.exitCode ?? 0, reason: .clientHungUp)
        }
        // While the output is full the input is not read, so its end would never be seen: watch it.
        let watchHangUp = input == .open && status.pendingOutputBytes >= configuration.maxPendingOutputBytes
        writeDue = true
        return .wait(Wait(
            readInput: readInput, watchInputHangUp: watchHangUp, writeOutput: status.writableOutputBytes > 0,
            deadline: deadline))
    }

    /// The next frame to dispatch, if there is room for one: a whole frame the decoder holds, or at the end
    /// of the input what its unfinished bytes were.
    private mutating func nextFrame(_ status: Status) -> Action? {
        guard hasRoom(status) else { return nil }
        if holdsFrames {
            if let event = decoder.next() { return .dispatch(event, framing: decoder.framing) }
            holdsFrames = false
        }
        if finishPending {
            finishPending = false
            if let event = decoder.finish() { return .dispatch(event, framing: decoder.framing) }
        }
        return nil
    }

    /// Whether there is room for more work: output pending and requests in flight under their limits.
    private func hasRoom(_ status: Status) -> Bool {
        status.pendingOutputBytes < configuration.maxPendingOutputBytes
            && status.requestsInFlight < configuration.maxInFlightRequests
    }

    /// Reads no more: after `exit`, drain within the drain timeout (or what is left of a hang-up's).
    private mutating func closeInput(now: Duration) {
        switch input {
        case .open: input = .closed(deadline: now + configuration.drainTimeout)
        case .hungUp(let deadline): input = .closed(deadline: deadline)
        case .closed: break
        }
    }

    private var isOpenOrHungUp: Bool {
        if case .closed = input { return false }
        return true
    }

    /// When the machine must act without an event: the drain or hang-up deadline.
    private var deadline: Duration? {
        switch input {
        case .open: nil
        case .hungUp(let deadline), .closed(let deadline): deadline
        }
    }
}
