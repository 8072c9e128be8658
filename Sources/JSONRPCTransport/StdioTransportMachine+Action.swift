import JSONRPC

extension StdioTransportMachine {
    /// What the driver is to do next.
    public enum Action: Equatable, Sendable {
        /// Hand this frame to the connection (a message body, or a framing error it answers), after setting
        /// the outbox's framing to `framing` when it is known: answers go out in the framing the client spoke.
        case dispatch(FrameDecoder.Event, framing: Framing?)
        /// Run the main thread's queued jobs (the tasks just started, up to their first suspension).
        case runMainQueue
        /// Write as much pending output as the output takes now; report ``Event/outputClosed`` if its reader
        /// is gone.
        case writeOutput
        /// Wait until one of the things ``Wait`` names happens, or its deadline; meanwhile run the main
        /// queue whenever it has jobs.
        case wait(Wait)
        /// End the session: exit the process with `code`.
        case exit(code: Int32, reason: ExitReason)
    }

    /// What to wait for. The driver always waits on the main queue as well.
    public struct Wait: Equatable, Sendable {
        /// Read the input when it is readable, and report what the read brought.
        public var readInput: Bool
        /// The input is not read, but watch it for a hang-up (the client closing it) and report one.
        public var watchInputHangUp: Bool
        /// Output is pending: wake up when the output has room for more (a non-blocking output).
        public var writeOutput: Bool
        /// Wake up at this time on the driver's clock at the latest; `nil` for no limit.
        public var deadline: Duration?

        /// A wait from its parts.
        public init(readInput: Bool, watchInputHangUp: Bool = false, writeOutput: Bool = false, deadline: Duration? = nil) {
            self.readInput = readInput
            self.watchInputHangUp = watchInputHangUp
            self.writeOutput = writeOutput
            self.deadline = deadline
        }
    }

    /// Why the session ended; the driver logs all but ``finished``.
    public enum ExitReason: Equatable, Sendable {
        /// The input ended or `exit` came, then every request answered and all output was written.
        case finished
        /// The input ended or `exit` came, but requests were still in flight or output still waited when the
        /// drain timeout passed.
        case drainTimedOut
        /// The client closed its input while it read no output, and did not read within the drain timeout.
        case clientHungUp
        /// The reader of the output is gone.
        case outputClosed
    }
}
