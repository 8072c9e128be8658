import CMainQueue
import JSONRPC
import JSONRPCTransport

/// One input's session with the server: the connection driven through a ``StdioTransportMachine`` as
/// `StdioTransport` drives it, and everything the server wrote.
///
/// The machine decides, as in `serve`, which frames are dispatched and when (flow control included),
/// when the main queue runs, when output is written and when the session ends; the harness only stands
/// in for the descriptors: each chunk of the input is one read, and every write is taken whole at once,
/// as by a client that always reads. Time does not pass (`now` stays zero), so no drain deadline ever
/// expires: the harness waits for work itself (`FuzzHarness.settle`).
@MainActor
final class FuzzSession {
    /// The connection served.
    let connection: Connection
    /// Everything the server wrote, in order.
    private(set) var output: [UInt8] = []
    /// What the client sent, as the answers it is owed.
    private(set) var expected: ExpectedAnswers
    /// Frames handed to the connection (messages and framing errors).
    private(set) var framesDispatched = 0
    /// Times the server stopped reading input that was still open (its output or its requests at their
    /// limits, or frames waiting in the decoder for room).
    private(set) var readsHeldBack = 0
    /// Whether the machine's last wait asked to read the input: the client may send the next chunk.
    private(set) var readsInput = false
    /// Whether the machine has ended the session (it would exit here); output is then collected directly.
    private(set) var ended = false
    private var machine: StdioTransportMachine
    private var inputEnded = false

    /// A session over `connection`, waiting for its first read.
    ///
    /// - Parameters:
    ///   - connection: the connection to serve.
    ///   - configuration: the transport's framing and limits.
    ///   - maxBatchLength: the connection's batch limit, for the answers owed.
    init(connection: Connection, configuration: StdioTransportMachine.Configuration, maxBatchLength: Int) {
        self.connection = connection
        // As `StdioTransport` serves it: changed state is flushed where the loop would wait.
        connection.runsBeforeWaiting = true
        machine = StdioTransportMachine(configuration: configuration)
        expected = ExpectedAnswers(maxBatchLength: maxBatchLength)
        pump()
    }

    /// One read brought `chunk`: the machine dispatches what there is room for, runs the main queue and
    /// writes, as for a read from stdin.
    func receive(_ chunk: ArraySlice<UInt8>) {
        wake(with: .inputReceived(chunk))
    }

    /// The client closed its input.
    func endInput() {
        inputEnded = true
        wake(with: .inputEnded)
    }

    /// Ends the machine's wait with `event`, as `StdioTransport` does when `poll` reports the input: jobs
    /// that reached the main queue meanwhile run first (the main queue is polled too, and run before the
    /// input is read), then the machine acts.
    private func wake(with event: StdioTransportMachine.Event) {
        cmq_drain_main_queue()
        machine.handle(event, now: .zero)
        pump()
    }

    /// Performs the machine's actions until it waits (for input, room or tasks) or ends the session. Call
    /// again after running the main queue: that ends the machine's wait, as a main-queue wake-up does.
    func pump() {
        guard !ended else {
            collectOutput()
            return
        }
        while true {
            switch machine.nextAction(StdioTransportMachine.Status(of: connection), now: .zero) {
            case .dispatch(let frame, let framing):
                framesDispatched += 1
                switch frame {
                case .message(let body): expected.noteMessage(body)
                case .error: expected.noteFramingError()
                }
                connection.receive(frame, framing: framing)
            case .runMainQueue:
                cmq_drain_main_queue()
            case .writeOutput:
                collectOutput()
            case .wait(let wait):
                // Where `StdioTransport` would poll, what the jobs changed is sent first. The harness runs its
                // tasks on the main dispatch queue, drained before each pump, so it flushes at least wherever
                // the server would (more often: it may show a state the server would merge, such as a
                // checkout's `submitting`).
                if connection.runBeforeWaiting() { continue }
                if readsInput, !wait.readInput, !inputEnded, connection.exitCode == nil { readsHeldBack += 1 }
                readsInput = wait.readInput
                return
            case .exit:
                ended = true
                readsInput = false
                collectOutput()
                return
            }
        }
    }

    /// Hands the connection a message of the harness's own (not client input, so not through the machine)
    /// and collects its answer.
    func send(_ body: ArraySlice<UInt8>) {
        expected.noteMessage(body)
        connection.receive(body)
        collectOutput()
    }

    /// Takes the pending output, as the transport's write does, and tells the outbox it was written.
    func collectOutput() {
        let outbox = connection.outbox
        output += outbox.pending
        outbox.consume(outbox.pending.count)
        outbox.noteWritten()
    }
}
