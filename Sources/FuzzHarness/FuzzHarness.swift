import CMainQueue
import Credentials
import Clocks
import JSON
import JSONRPC
import JSONRPCTransport
import Logging
import Shop
import ShopStore
import StorefrontServer

#if canImport(Glibc)
import Glibc
#endif

/// Runs arbitrary bytes through the whole server as `storefront serve` would read them from stdin, and
/// checks what it wrote.
///
/// Each ``run(_:)`` builds a fresh server with `ServerAssembly` (the composition root of `serve`) over a
/// new in-memory store (a copy of one seeded store), cuts the input into reads (``ChunkPlan``), and
/// serves them through the transport's own state machine (`StdioTransportMachine`, in ``FuzzSession``),
/// which decodes frames in auto mode, dispatches them under its flow control, runs the main queue so that
/// started tasks reach their first suspension, and writes out (here: collects) the output. After some
/// reads the client waits until everything has finished; while the server does not read (flow control,
/// or after `exit`) the client waits too. After the last read the input ends, as the client closes it.
/// Then it lets everything finish: every request, every ViewModel task, every store
/// call (the clock is an ``ImmediateClock``, so debounces and timers end at once). It asks
/// `viewModel/get` of every open ViewModel, closes them, and checks:
///
/// - the decoder gives the same frames whether the input comes whole or in pieces;
/// - the output is framed JSON in the framing the client spoke, and every message is JSON-RPC 2.0;
/// - every request, invalid message and framing error got exactly one answer with the right id (batches:
///   one array with the answers of their members); notifications got none;
/// - each ViewModel's notifications count up by one, their patches apply, and the patched state equals
///   what `viewModel/get` returns; no action answers before the notification of the version it reports;
/// - once nothing is running, no ViewModel shows a load or a submission in progress;
/// - once closed and dropped, no ViewModel, subscription or store is left alive.
///
/// Must run on the main thread, outside any main-queue job (it drains the main queue itself), in a
/// process that does nothing else: the first run moves all of Swift's global executor onto the main
/// queue (``MainQueueExecutor``), so that the harness can tell when nothing is left to happen.
@MainActor
public struct FuzzHarness {
    /// Limits, set low so that fuzzed inputs of a few kilobytes reach the size, batch and open-ViewModel
    /// limits and the transport's flow control.
    public struct Configuration: Sendable {
        /// `--max-message-bytes`.
        public var maxMessageBytes = 2_048
        /// The longest batch accepted.
        public var maxBatchLength = 64
        /// The most ViewModels open at once.
        public var maxOpenViewModels = 8
        /// The transport stops reading while this many bytes of output wait to be written. The client
        /// reads every write at once, so only the answers to one read count: a read of many
        /// `viewModel/get` reaches it.
        public var maxPendingOutputBytes = 16 * 1024
        /// The transport stops reading while this many requests are in flight.
        public var maxInFlightRequests = 8
        /// Seconds without any progress after which work still under way counts as hung.
        public var hangSeconds: Int32 = 30
        /// Main-queue drains after which work still under way counts as never settling.
        public var maxDrains = 100_000

        /// The defaults.
        public init() {}
    }

    /// The limits in use.
    public let configuration: Configuration
    private let logger: Logger

    /// The freshly migrated and seeded store that each input gets a copy of (seeding one per input
    /// would take most of the time).
    private static let template = Result { try ShopDatabase(path: ":memory:") }

    /// The id prefix of the harness's own `viewModel/get` at the end of an input.
    static let finalGetPrefix = "fuzz-final-get-"

    /// A harness with `configuration`; logs are dropped unless `logger` is given.
    public init(configuration: Configuration = Configuration(), logger: Logger? = nil) {
        self.configuration = configuration
        self.logger = logger ?? Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// Runs `input` through a fresh server.
    ///
    /// - Parameter input: the bytes a client writes to the server's stdin, then closes it.
    /// - Returns: what happened, with every broken invariant.
    public func run(_ input: [UInt8]) -> FuzzReport {
        MainQueueExecutor.install()
        var report = FuzzReport()
        var checker = OutputChecker()
        let plan = ChunkPlan(for: input)
        checkSplitInvariance(plan.body(of: input), chunks: plan.chunks(of: input), checker: &checker)

        let counter = ServiceCallCounter()
        var survivors = Survivors()
        guard let events = serve(input, plan: plan, counter: counter, report: &report, checker: &checker, survivors: &survivors) else {
            report.violations = checker.violations
            return report
        }

        // Everything the server made is gone now, unless something still holds it.
        if !settle(counter: counter, session: nil) {
            checker.fail("work still under way after the server was dropped")
        }
        if events.subscriberCount != 0 {
            checker.fail("\(events.subscriberCount) subscriptions to the change feed outlive their ViewModels")
        }
        for name in survivors.alive {
            checker.fail("\(name) is still alive after it was closed and the server dropped")
        }
        report.violations = checker.violations
        return report
    }

    /// Serves `chunks` with a fresh assembly over a fresh store, checks the output and closes every
    /// ViewModel. Returns the change feed (to count what is still subscribed once all else is gone), or
    /// `nil` when the store could not be opened.
    private func serve(
        _ input: [UInt8], plan: ChunkPlan, counter: ServiceCallCounter,
        report: inout FuzzReport, checker: inout OutputChecker, survivors: inout Survivors
    ) -> ShopEvents? {
        let database: ShopDatabase
        do {
            database = try Self.template.get().inMemoryCopy()
        } catch {
            checker.fail("could not make an in-memory store: \(error)")
            return nil
        }
        survivors.watch(database, as: "the store")
        let services = ShopServices.live(database: database, clock: ImmediateClock<Duration>(), hasher: PasswordHasher(cost: .minimum)).counted(by: counter)
        // Guest ids numbered per run: the same input gives the same run.
        let guests = GuestNumbering()
        let assembly = ServerAssembly(
            services: services, clock: ImmediateClock<Duration>(), makeGuestId: { guests.next() }, outbox: Outbox(), logger: logger)
        let connection = assembly.connection
        let host = assembly.host
        survivors.watch(connection, as: "the connection")
        survivors.watch(host, as: "the ViewModel host")
        connection.maxBatchLength = configuration.maxBatchLength
        host.maxOpenViewModels = configuration.maxOpenViewModels
        var transport = StdioTransportMachine.Configuration()
        transport.maxMessageBytes = configuration.maxMessageBytes
        transport.maxPendingOutputBytes = configuration.maxPendingOutputBytes
        transport.maxInFlightRequests = configuration.maxInFlightRequests
        let session = FuzzSession(connection: connection, configuration: transport, maxBatchLength: configuration.maxBatchLength)

        for (chunk, waits) in zip(plan.chunks(of: input), plan.waits) {
            // A server that has stopped reading reads on once the client has waited for it (unless `exit`
            // closed its input).
            if !session.readsInput, !settle(counter: counter, session: session) {
                checker.fail(hung(counter, connection))
                break
            }
            guard session.readsInput else { break }
            session.receive(chunk)
            if waits, !settle(counter: counter, session: session) {
                checker.fail(hung(counter, connection))
                break
            }
            for handle in host.openHandles {
                survivors.watch(host.openModel(handle), as: "\(handle) (\(host.openModel(handle).map { type(of: $0) }.map(String.init(describing:)) ?? "?"))")
            }
        }
        // The client closes its input, once the server reads it again.
        if !session.readsInput { _ = settle(counter: counter, session: session) }
        if session.readsInput { session.endInput() }
        if !settle(counter: counter, session: session) {
            checker.fail(hung(counter, connection))
        }
        report.exited = connection.exitCode != nil
        report.framesDispatched = session.framesDispatched
        report.readsHeldBack = session.readsHeldBack

        // Every open ViewModel's state, read once nothing runs: it must equal the client's patched copy.
        let finalHandles = connection.phase == .running ? host.openHandles : []
        for handle in finalHandles {
            session.send(Array(#"{"jsonrpc":"2.0","id":"\#(Self.finalGetPrefix)\#(handle)","method":"viewModel/get","params":{"viewModel":"\#(handle)"}}"#.utf8)[...])
        }
        report.output = session.output
        checker.check(output: session.output, framing: connection.outbox.framing, expected: session.expected)
        for handle in finalHandles {
            guard let state = checker.mirrors[handle]?.state else {
                checker.fail("\(handle) is open but no answer to its open was written")
                continue
            }
            for busy in Self.workShownInProgress(state) {
                checker.fail("\(handle) shows \(busy) while nothing runs")
            }
        }
        report.messagesWritten = checker.messages.count
        report.viewModelsOpen = host.openHandles.count

        for handle in finalHandles {
            connection.receive(["jsonrpc": "2.0", "id": "fuzz-close", "method": "viewModel/close", "params": ["viewModel": .string(handle)]])
        }
        if !settle(counter: counter, session: session) {
            checker.fail("work still under way after every ViewModel was closed")
        }
        return services.events
    }

    /// Runs the main queue until nothing is left to do: no request in flight (when `session` is given),
    /// no service call under way and no main-queue job. After each turn the session's transport machine
    /// acts (its wait is over): it writes, and dispatches frames it held back. Returns false when work was
    /// still under way after ``Configuration/hangSeconds`` without any main-queue job, or after
    /// ``Configuration/maxDrains``.
    private func settle(counter: ServiceCallCounter, session: FuzzSession?) -> Bool {
        let descriptor = cmq_main_queue_fd()
        var idleSeconds: Int32 = 0
        for _ in 0..<configuration.maxDrains {
            cmq_drain_main_queue()
            session?.pump()
            let busy = (session?.connection.inFlightCount ?? 0) > 0 || counter.outstanding > 0
            var pending = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&pending, 1, busy ? 1_000 : 0) > 0 {
                idleSeconds = 0
                continue
            }
            if !busy { return true }
            idleSeconds += 1
            if idleSeconds >= configuration.hangSeconds { return false }
        }
        return false
    }

    /// The violation of work that never finishes.
    private func hung(_ counter: ServiceCallCounter, _ connection: Connection) -> String {
        "still under way after \(configuration.hangSeconds) s without progress or \(configuration.maxDrains) turns: \(connection.inFlightCount) requests, \(counter.outstanding) service calls"
    }
}
