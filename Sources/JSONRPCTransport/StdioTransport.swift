import CMainQueue
import JSON
import JSONRPC
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Serves a ``Connection`` over a pair of file descriptors (stdin and stdout) from one `poll()` loop on
/// the main thread.
///
/// The loop waits on the input, on the output when bytes are pending, and on the main dispatch queue, so
/// the main actor's tasks run on this same thread between reads: no thread hand-off per request and no
/// polling with sleeps. Everything one read brings is parsed and dispatched in one main-actor turn, and
/// the answers go out with one `write`. Input is not read while too much output is pending or too many
/// requests are in flight, so memory is bounded by that window rather than by how fast the client writes.
public final class StdioTransport {
    /// Tunables.
    public struct Configuration: Sendable {
        /// Which framing to accept.
        public var framing: FramingChoice = .auto
        /// The largest message accepted, in bytes.
        public var maxMessageBytes = 16 * 1024 * 1024
        /// Stop reading while more than this many bytes wait to be written.
        public var maxPendingOutputBytes = 4 * 1024 * 1024
        /// Stop reading while this many requests are in flight.
        public var maxInFlightRequests = 4_096
        /// After end of input or `exit`, how long to keep trying to deliver pending output, in ms.
        public var drainTimeoutMilliseconds = 5_000

        /// The defaults.
        public init() {}
    }

    private let input: Int32
    private let output: Int32
    private let configuration: Configuration
    private let logger: Logger
    private var decoder: FrameDecoder
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var outputIsNonBlocking = false
    /// Whether the decoder may hold whole messages not yet dispatched (held back while output is full).
    private var decoderMayHoldMessages = false

    /// A transport reading `input` and writing `output`.
    public init(input: Int32, output: Int32, configuration: Configuration, logger: Logger) {
        self.input = input
        self.output = output
        self.configuration = configuration
        self.logger = logger
        self.decoder = FrameDecoder(choice: configuration.framing, maxMessageBytes: configuration.maxMessageBytes)
    }

    /// Runs until the client is gone (end of input: exit code 0) or sends `exit` (0 after `shutdown`,
    /// 1 otherwise). Call on the main thread.
    ///
    /// - Returns: the exit code.
    @MainActor
    public func run(_ connection: Connection) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        outputIsNonBlocking = makeNonBlockingIfPipe(output)
        let mainQueue = cmq_main_queue_fd()
        let outbox = connection.outbox
        var inputOpen = true
        var deadline: Int64?
        /// Set when the client closed its input while we were not reading it because it does not read
        /// its output; cleared when it reads again.
        var hangUpDeadline: Int64?

        while true {
            // Messages read earlier and held back because their answers had no room.
            dispatchDecoded(into: connection)
            if connection.exitCode != nil, inputOpen {
                // `exit`: read no more; let requests in flight answer and the output drain, within the limit.
                inputOpen = false
                deadline = now() + Int64(configuration.drainTimeoutMilliseconds)
            }
            if !inputOpen {
                if connection.inFlightCount == 0 && outbox.pending.isEmpty { return connection.exitCode ?? 0 }
                if let deadline, now() >= deadline {
                    logger.warning("gave up delivering output after the end of input",
                                   metadata: ["pendingBytes": "\(outbox.pending.count)", "inFlight": "\(connection.inFlightCount)"])
                    return connection.exitCode ?? 0
                }
            }
            let wantInput = inputOpen && !decoderMayHoldMessages && hasRoom(connection)
            if wantInput { hangUpDeadline = nil }
            if let hangUpDeadline, now() >= hangUpDeadline {
                logger.warning("the client closed its input and reads no output; exiting",
                               metadata: ["pendingBytes": "\(outbox.pending.count)", "inFlight": "\(connection.inFlightCount)"])
                return connection.exitCode ?? 0
            }
            // While the output is full the input is not read, so its end would never be seen: watch it
            // for a hang-up instead (POLLHUP needs no events), and then give the client the drain time.
            let watchHangUp = inputOpen && hangUpDeadline == nil
                && outbox.pending.count >= configuration.maxPendingOutputBytes
            var descriptors = [
                pollfd(fd: mainQueue, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wantInput || watchHangUp ? input : -1, events: wantInput ? Int16(POLLIN) : 0, revents: 0),
                pollfd(fd: outbox.pending.isEmpty || !outputIsNonBlocking ? -1 : output, events: Int16(POLLOUT), revents: 0),
            ]
            let timeout = [deadline, hangUpDeadline].compactMap { $0 }.min()
                .map { Int32(clamping: max(0, $0 - now())) } ?? -1
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.error("poll failed", metadata: ["errno": "\(errno)"])
                return 1
            }
            if descriptors[0].revents != 0 {
                cmq_drain_main_queue()
            }
            if descriptors[1].revents != 0, !wantInput {
                hangUpDeadline = now() + Int64(configuration.drainTimeoutMilliseconds)
                logger.debug("the client closed its input while its output is full")
            } else if descriptors[1].revents != 0 {
                if !readInput(into: connection) {
                    inputOpen = false
                    deadline = now() + Int64(configuration.drainTimeoutMilliseconds)
                    logger.debug("end of input")
                }
                // Run the tasks this input started up to their first suspension, so that quick answers
                // leave in the same write.
                cmq_drain_main_queue()
            }
            if !outbox.pending.isEmpty, !write(outbox) {
                logger.info("the client closed its end of the output; exiting")
                return connection.exitCode ?? 0
            }
        }
    }

    /// Whether there is room for more work: output pending and requests in flight under their limits.
    @MainActor
    private func hasRoom(_ connection: Connection) -> Bool {
        connection.outbox.pending.count < configuration.maxPendingOutputBytes
            && connection.inFlightCount < configuration.maxInFlightRequests
    }

    /// Reads once and dispatches the complete messages there is room for. Returns false at end of input.
    @MainActor
    private func readInput(into connection: Connection) -> Bool {
        let count = readBuffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if count < 0 {
            return errno == EINTR || errno == EAGAIN
        }
        if count == 0 {
            // End of input: a last line without its newline is still a message; a cut frame is answered.
            if let event = decoder.finish() { dispatch(event, to: connection) }
            return false
        }
        readBuffer.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        decoderMayHoldMessages = true
        dispatchDecoded(into: connection)
        return true
    }

    /// Dispatches decoded messages while there is room, checking before each: one read holds hundreds of
    /// small requests, and their answers (a `viewModel/get` answers a whole state) could otherwise
    /// overshoot the pending-output limit many times over. The rest wait in the decoder.
    @MainActor
    private func dispatchDecoded(into connection: Connection) {
        while decoderMayHoldMessages, hasRoom(connection) {
            guard let event = decoder.next() else {
                decoderMayHoldMessages = false
                return
            }
            dispatch(event, to: connection)
        }
    }

    @MainActor
    private func dispatch(_ event: FrameDecoder.Event, to connection: Connection) {
        if let framing = decoder.framing { connection.outbox.framing = framing }
        switch event {
        case .message(let body): connection.receive(body)
        case .error(let error): connection.receive(framingError: error)
        }
    }

    /// Writes what the output takes now (all of it when the output is blocking). Returns false when the
    /// reader is gone.
    @MainActor
    private func write(_ outbox: Outbox) -> Bool {
        while !outbox.pending.isEmpty {
            let written = outbox.pending.withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
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

    /// Sets O_NONBLOCK on a pipe or socket (a terminal or file stays blocking). Returns whether it did.
    private func makeNonBlockingIfPipe(_ descriptor: Int32) -> Bool {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFIFO || kind == S_IFSOCK else { return false }
        let flags = fcntl(descriptor, F_GETFL)
        return flags >= 0 && fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0
    }

    /// Milliseconds on the monotonic clock.
    private func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
