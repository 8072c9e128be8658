import JSONRPC

extension StdioTransportMachine {
    /// The connection as the machine sees it: its load and whether it has asked to exit.
    public struct Status: Equatable, Sendable {
        /// Bytes in the outbox not yet written.
        public var pendingOutputBytes: Int
        /// Of those, the bytes held for the outbox's barrier (a commit's sync): not to be written yet.
        public var heldOutputBytes: Int
        /// The pending bytes that may be written now.
        public var writableOutputBytes: Int { pendingOutputBytes - heldOutputBytes }
        /// Requests still running.
        public var requestsInFlight: Int
        /// Set once the client has sent `exit` (the code to exit with).
        public var exitCode: Int32?

        /// A status from its parts.
        public init(pendingOutputBytes: Int = 0, heldOutputBytes: Int = 0, requestsInFlight: Int = 0, exitCode: Int32? = nil) {
            self.pendingOutputBytes = pendingOutputBytes
            self.heldOutputBytes = heldOutputBytes
            self.requestsInFlight = requestsInFlight
            self.exitCode = exitCode
        }

        /// The status of `connection` now.
        @MainActor
        public init(of connection: Connection) {
            let outbox = connection.outbox
            self.init(
                pendingOutputBytes: outbox.pending.count, heldOutputBytes: outbox.heldCount, requestsInFlight: connection.inFlightCount,
                exitCode: connection.exitCode)
        }
    }
}
