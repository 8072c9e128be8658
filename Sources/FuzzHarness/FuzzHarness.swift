import CMainQueue
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
/// new in-memory store (a copy of one seeded store), cuts the input into reads (``ChunkPlan``), and for each read does what
/// `StdioTransport` does: decode frames in auto mode, hand each to the connection, run the main queue so
/// that started tasks reach their first suspension, and write out (here: collect) the output; after
/// some reads the client waits until everything has finished. Reading stops after `exit`. Then it lets everything finish: every request, every ViewModel task, every store
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
    /// limits.
    public struct Configuration: Sendable {
        /// `--max-message-bytes`.
        public var maxMessageBytes = 2_048
        /// The longest batch accepted.
        public var maxBatchLength = 64
        /// The most ViewModels open at once.
        public var maxOpenViewModels = 8
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
        if !settle(counter: counter, connection: nil) {
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
        let services = ShopServices.live(database: database, clock: ImmediateClock()).counted(by: counter)
        let assembly = ServerAssembly(services: services, clock: ImmediateClock(), outbox: Outbox(), logger: logger)
        let connection = assembly.connection
        let host = assembly.host
        survivors.watch(connection, as: "the connection")
        survivors.watch(host, as: "the ViewModel host")
        connection.maxBatchLength = configuration.maxBatchLength
        host.maxOpenViewModels = configuration.maxOpenViewModels
        var output: [UInt8] = []

        var expected = ExpectedAnswers(maxBatchLength: configuration.maxBatchLength)
        var decoder = FrameDecoder(choice: .auto, maxMessageBytes: configuration.maxMessageBytes)
        for (chunk, waits) in zip(plan.chunks(of: input), plan.waits) {
            // As StdioTransport.readInput: everything one read brings is dispatched in one turn.
            decoder.append(chunk)
            while let event = decoder.next() {
                if let framing = decoder.framing { connection.outbox.framing = framing }
                report.framesDispatched += 1
                switch event {
                case .message(let body):
                    expected.noteMessage(body)
                    connection.receive(body)
                case .error(let error):
                    expected.noteFramingError()
                    connection.receive(framingError: error)
                }
            }
            cmq_drain_main_queue()
            write(connection.outbox, to: &output)
            if waits, !settle(counter: counter, connection: connection, output: &output) {
                checker.fail("still under way after \(configuration.hangSeconds) s without progress or \(configuration.maxDrains) turns: \(connection.inFlightCount) requests, \(counter.outstanding) service calls")
                break
            }
            for handle in host.openHandles {
                survivors.watch(host.openModel(handle), as: "\(handle) (\(host.openModel(handle).map { type(of: $0) }.map(String.init(describing:)) ?? "?"))")
            }
            if connection.exitCode != nil {
                report.exited = true
                break
            }
        }
        if !settle(counter: counter, connection: connection, output: &output) {
            checker.fail("still under way after \(configuration.hangSeconds) s without progress or \(configuration.maxDrains) turns: \(connection.inFlightCount) requests, \(counter.outstanding) service calls")
        }

        // Every open ViewModel's state, read once nothing runs: it must equal the client's patched copy.
        let finalHandles = connection.phase == .running ? host.openHandles : []
        for handle in finalHandles {
            let body = Array(#"{"jsonrpc":"2.0","id":"\#(Self.finalGetPrefix)\#(handle)","method":"viewModel/get","params":{"viewModel":"\#(handle)"}}"#.utf8)
            expected.noteMessage(body[...])
            connection.receive(body[...])
        }
        write(connection.outbox, to: &output)
        report.output = output
        checker.check(output: output, framing: connection.outbox.framing, expected: expected)
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
        var discarded: [UInt8] = []
        if !settle(counter: counter, connection: connection, output: &discarded) {
            checker.fail("work still under way after every ViewModel was closed")
        }
        return services.events
    }

    /// The decoder must give the same frames for the input whole and cut into `chunks`.
    private func checkSplitInvariance(_ input: ArraySlice<UInt8>, chunks: [ArraySlice<UInt8>], checker: inout OutputChecker) {
        func frames(_ pieces: [ArraySlice<UInt8>]) -> ([FrameDecoder.Event], Framing?) {
            var decoder = FrameDecoder(choice: .auto, maxMessageBytes: configuration.maxMessageBytes)
            var events: [FrameDecoder.Event] = []
            for piece in pieces {
                decoder.append(piece)
                while let event = decoder.next() { events.append(event) }
            }
            return (events, decoder.framing)
        }
        let whole = frames([input])
        let split = frames(chunks)
        if whole.0 != split.0 || whole.1 != split.1 {
            let index = zip(whole.0, split.0).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(whole.0.count, split.0.count)
            func event(_ events: [FrameDecoder.Event]) -> String {
                guard index < events.count else { return "nothing" }
                switch events[index] {
                case .message(let body): return "message \(OutputChecker.excerpt(body))"
                case .error(let error): return "error \(error)"
                }
            }
            checker.fail("the decoder's frame \(index) is \(event(split.0)) for the input cut \(chunks.map(\.count)), \(event(whole.0)) for it whole")
        }
    }

    /// Paths in a ViewModel state that show a load or a submission under way (`phase: "loading"`,
    /// `submitPhase: "submitting"`, `isLoadingMore: true`, ...).
    nonisolated static func workShownInProgress(_ state: JSONValue, path: String = "") -> [String] {
        switch state {
        case .object(let members):
            return members.keys.sorted().flatMap { key -> [String] in
                let value = members[key]!
                let here = "\(path)/\(key)"
                if key.lowercased().hasSuffix("phase"), value == "loading" || value == "submitting" {
                    return ["\(here) = \(value)"]
                }
                if key.hasPrefix("isLoading"), value == true { return ["\(here) = true"] }
                return workShownInProgress(value, path: here)
            }
        case .array(let elements):
            return elements.indices.flatMap { workShownInProgress(elements[$0], path: "\(path)/\($0)") }
        default:
            return []
        }
    }

    /// Runs the main queue until nothing is left to do: no request in flight (when `connection` is
    /// given), no service call under way and no main-queue job. Output is collected into `output` after
    /// each turn, as the transport writes it. Returns false when work was still under way after
    /// ``Configuration/hangSeconds`` without any main-queue job, or after ``Configuration/maxDrains``.
    private func settle(counter: ServiceCallCounter, connection: Connection?, output: inout [UInt8]) -> Bool {
        let descriptor = cmq_main_queue_fd()
        var idleSeconds: Int32 = 0
        for _ in 0..<configuration.maxDrains {
            cmq_drain_main_queue()
            if let connection { write(connection.outbox, to: &output) }
            let busy = (connection?.inFlightCount ?? 0) > 0 || counter.outstanding > 0
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

    private func settle(counter: ServiceCallCounter, connection: Connection?) -> Bool {
        var output: [UInt8] = []
        return settle(counter: counter, connection: connection, output: &output)
    }

    /// Takes the pending output, as the transport's write does, and tells the outbox it was written.
    private func write(_ outbox: Outbox, to output: inout [UInt8]) {
        output += outbox.pending
        outbox.consume(outbox.pending.count)
        outbox.noteWritten()
    }
}

/// Weak references to objects that must be gone at the end of an iteration.
struct Survivors {
    private final class Weak {
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

    private var watched: [(name: String, reference: Weak)] = []

    /// Watches `object` under `name` (once per object).
    mutating func watch(_ object: AnyObject?, as name: String) {
        guard let object, !watched.contains(where: { $0.reference.object === object }) else { return }
        watched.append((name, Weak(object)))
    }

    /// The names of the watched objects still alive.
    var alive: [String] { watched.filter { $0.reference.object != nil }.map(\.name) }
}
