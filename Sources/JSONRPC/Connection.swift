import JSON
import Logging
import Synchronization

/// One JSON-RPC 2.0 peer: lifecycle, dispatch in arrival order, batches, cancellation and errors.
///
/// The transport hands it complete message bodies; it answers through its ``Outbox``. It runs on the
/// main actor: synchronous handlers answer inside the turn that read the request, long ones run as tasks
/// so that `ping` and `$/cancelRequest` are served meanwhile. Every request gets exactly one response.
@MainActor
public final class Connection {
    /// Where the lifecycle stands.
    public enum Phase: Equatable, Sendable {
        /// Before `initialize`.
        case uninitialized
        /// Serving.
        case running
        /// After `shutdown`: only `exit` is accepted.
        case shuttingDown
    }

    /// Outgoing messages.
    public let outbox: Outbox
    /// The lifecycle phase.
    public private(set) var phase: Phase = .uninitialized
    /// Set by the `exit` notification: 0 after `shutdown`, 1 otherwise. The transport exits with it.
    public private(set) var exitCode: Int32?
    /// The most elements a batch may have; a larger one is answered with one -32600 error.
    public var maxBatchLength = 10_000

    private let identity: ServerIdentity
    private let logger: Logger
    private var methods: [String: (MethodHandler, MethodDescription?)] = [:]
    private var notificationHandlers: [String: @MainActor (Request) -> Void] = [:]
    private var inFlight: [RequestID: Task<Void, Never>] = [:] {
        // Without `oldValue`: an observer that reads it makes every change copy the dictionary first.
        didSet { inFlightNow.store(inFlight.count, ordering: .relaxed) }
    }
    private nonisolated let inFlightNow = Atomic<Int>(0)
    /// The executor the requests' tasks prefer (the transport's main-queue executor in the server), so that
    /// their waits resume where they run instead of by way of the global pool; nil: none.
    public var taskExecutor: (any TaskExecutor)?
    /// Whether the transport serving this connection calls ``beforeWaiting`` each time it has run the work the
    /// main thread queued and is about to wait (``StdioTransport`` sets it while it serves). Producers that
    /// coalesce what they send (state notifications) then send at that point instead of queueing a job of
    /// their own, which would run before work queued after it (an action's commit, its next step). Read from
    /// any thread, as a change happens: before the transport runs and after it has stopped, it is false.
    public nonisolated var runsBeforeWaiting: Bool {
        get { beforeWaitingRuns.load(ordering: .acquiring) }
        set { beforeWaitingRuns.store(newValue, ordering: .releasing) }
    }
    private nonisolated let beforeWaitingRuns = Atomic<Bool>(false)
    /// What the transport runs each time it has run every job the main thread queued and would wait (for
    /// input, room for output, a timer or another thread), when ``runsBeforeWaiting``: the point where a run
    /// loop's "before waiting" observers run. Output it queues is written before the transport waits. It has
    /// one owner (the ViewModel host, which flushes changed state there): setting it replaces the last one.
    public var beforeWaiting: (@MainActor () -> Void)?

    /// Runs ``beforeWaiting`` (what a transport does each time its loop would wait) and says whether it queued
    /// output: the transport then writes that first, and comes back here before it waits.
    ///
    /// - Returns: true when the outbox's pending output changed during the call (it can only grow there).
    public func runBeforeWaiting() -> Bool {
        guard let beforeWaiting else { return false }
        let pendingBefore = outbox.pending.count
        beforeWaiting()
        return outbox.pending.count != pendingBefore
    }
    private var capabilities: JSONValue = [:]
    private var initializeHook: (@MainActor (InitializeParams) throws -> Void)?
    private var discoverExtras: [String: JSONValue] = [:]
    private var notificationDescriptions: [MethodDescription] = []

    /// A connection that answers through `outbox`.
    ///
    /// - Parameters:
    ///   - identity: the server's name, version and protocol version.
    ///   - outbox: where responses and notifications go.
    ///   - logger: the stderr log channel.
    public init(identity: ServerIdentity, outbox: Outbox, logger: Logger) {
        self.identity = identity
        self.outbox = outbox
        self.logger = logger
        registerBuiltins()
    }

    /// Requests still running (tasks not yet answered).
    public var inFlightCount: Int { inFlight.count }

    /// ``inFlightCount`` read from any thread (a database's commit hook, say): the count as of the main thread's
    /// last change to it, which may be a moment old when read elsewhere.
    public nonisolated var requestsInFlight: Int { inFlightNow.load(ordering: .relaxed) }

    // MARK: Registration

    /// Serves `description.name` with `handler`; replaces any earlier handler of that name.
    public func register(_ description: MethodDescription, handler: MethodHandler) {
        methods[description.name] = (handler, description)
    }

    /// Handles the notification `method` (notifications are never answered).
    public func onNotification(_ method: String, _ handler: @escaping @MainActor (Request) -> Void) {
        notificationHandlers[method] = handler
    }

    /// Sets the `capabilities` member of the `initialize` result, and a hook that reads the client's
    /// `initialize` params (it may throw an ``RPCError`` to refuse them).
    public func configureInitialize(capabilities: JSONValue, hook: (@MainActor (InitializeParams) throws -> Void)? = nil) {
        self.capabilities = capabilities
        self.initializeHook = hook
    }

    /// Lists a notification (either direction) in the OpenRPC document; its `result` should be `nil`.
    public func describeNotification(_ description: MethodDescription) {
        notificationDescriptions.append(description)
    }

    /// Adds top-level members (e.g. `components`) to the OpenRPC document of `rpc.discover`.
    public func addDiscoverMembers(_ members: [String: JSONValue]) {
        discoverExtras.merge(members) { _, new in new }
    }

    /// Sends a notification to the client.
    public func notify(_ method: String, params: JSONValue) {
        outbox.enqueueNotification(method, params: params)
    }

    /// Sends a notification whose params `writeParams` serialises itself (see
    /// ``Outbox/enqueueNotification(_:writingParams:)``).
    public func notify(_ method: String, writingParams writeParams: (inout [UInt8]) -> Void) {
        outbox.enqueueNotification(method, writingParams: writeParams)
    }

    // MARK: Input

    /// Handles one complete message body (a request, a notification, a batch, or anything else).
    public func receive(_ body: ArraySlice<UInt8>) {
        let value: JSONValue
        do {
            value = try body.withUnsafeBytes { try JSONValue(parsing: $0) }
        } catch let error as JSONParseError {
            logger.debug("unparsable message", metadata: ["error": "\(error)"])
            outbox.enqueue(RPCError.parseError(error.description).response(id: nil))
            return
        } catch {
            outbox.enqueue(RPCError.parseError("\(error)").response(id: nil))
            return
        }
        receive(value)
    }

    /// Handles one parsed message or batch.
    public func receive(_ value: JSONValue) {
        guard case .array(let elements) = value else {
            handle(Envelope(value), sink: .outbox)
            return
        }
        guard !elements.isEmpty else {
            outbox.enqueue(RPCError.invalidRequest("empty batch").response(id: nil))
            return
        }
        guard elements.count <= maxBatchLength else {
            outbox.enqueue(RPCError.invalidRequest(
                "batch of \(elements.count) messages exceeds the limit of \(maxBatchLength)").response(id: nil))
            return
        }
        let batch = BatchCollector(outbox: outbox)
        for element in elements {
            handle(Envelope(element), sink: .batch(batch))
        }
        batch.seal()
    }

    /// Answers bytes the transport could not take as a message (a framing error) with one error, id
    /// `null`; the stream goes on. The transport says which error fits (too large, or unparsable).
    public func receive(framingError: some RPCErrorConvertible) {
        logger.notice("framing error", metadata: ["error": "\(framingError)"])
        outbox.enqueue(framingError.rpcError.response(id: nil))
    }

    // MARK: Dispatch

    private func handle(_ envelope: Envelope, sink: ResponseSink) {
        switch envelope {
        case .invalid(let error, let id):
            sink.expect()
            sink.reply(.failure(error), id: id, outbox: outbox)
        case .response:
            logger.debug("ignored a response from the client; this server sends no requests")
        case .call(let request):
            if let id = request.id {
                dispatch(request, id: id, sink: sink)
            } else {
                dispatchNotification(request)
            }
        }
    }

    private func dispatch(_ request: Request, id: RequestID, sink: ResponseSink) {
        sink.expect()
        if let refusal = lifecycleRefusal(request.method) {
            sink.reply(.failure(refusal), id: id, outbox: self.outbox)
            return
        }
        guard let (handler, _) = methods[request.method] else {
            let error: RPCError = notificationHandlers[request.method] != nil
                ? .notificationSentAsRequest(request.method) : .methodNotFound(request.method)
            sink.reply(.failure(error), id: id, outbox: self.outbox)
            return
        }
        guard inFlight[id] == nil else {
            sink.reply(.failure(.invalidRequest("id \(id) is already in use by a request in flight")), id: id, outbox: self.outbox)
            return
        }
        if request.method == "shutdown" {
            // At once, not when its task runs: an `exit` read in the same turn must see it.
            phase = .shuttingDown
        }
        switch handler {
        case .immediate(let body):
            do {
                sink.reply(.success(try body(request)), id: id, outbox: self.outbox)
            } catch {
                sink.reply(.failure(RPCError(from: error)), id: id, outbox: self.outbox)
            }
        case .immediateSnapshot(let body):
            do {
                sink.reply(madeBy: try body(request), id: id, outbox: self.outbox)
            } catch {
                sink.reply(.failure(RPCError(from: error)), id: id, outbox: self.outbox)
            }
        case .task(let body):
            start({ try await body(request) }, id: id, sink: sink)
        case .preparedTask(let prepare):
            let body: @MainActor @Sendable () async throws -> JSONValue
            do {
                body = try prepare(request)
            } catch {
                sink.reply(.failure(RPCError(from: error)), id: id, outbox: self.outbox)
                return
            }
            start(body, id: id, sink: sink)
        }
    }

    /// Starts a request's task, in flight under `id` until it has answered.
    private func start(_ body: @escaping @MainActor @Sendable () async throws -> JSONValue, id: RequestID, sink: ResponseSink) {
        if let taskExecutor {
            inFlight[id] = Task(executorPreference: taskExecutor) { [self] in await run(body, id: id, sink: sink) }
        } else {
            inFlight[id] = Task { @MainActor in await self.run(body, id: id, sink: sink) }
        }
    }

    /// Runs a request's work in its task and answers it.
    private func run(_ body: @MainActor @Sendable () async throws -> JSONValue, id: RequestID, sink: ResponseSink) async {
        let outcome: Result<JSONValue, RPCError>
        do {
            outcome = .success(try await body())
        } catch {
            outcome = .failure(RPCError(from: error))
        }
        inFlight[id] = nil
        sink.reply(outcome, id: id, outbox: outbox)
    }

    private func lifecycleRefusal(_ method: String) -> RPCError? {
        switch phase {
        case .uninitialized:
            return ["initialize", "ping", "rpc.discover"].contains(method) ? nil : .serverNotInitialized
        case .running:
            return method == "initialize" ? .invalidRequest("the server is already initialized") : nil
        case .shuttingDown:
            return .invalidRequest("the server is shutting down; only \"exit\" is accepted")
        }
    }

    private func dispatchNotification(_ request: Request) {
        if let handler = notificationHandlers[request.method] {
            guard phase != .uninitialized || request.method == "exit" else {
                logger.debug("dropped a notification before initialize", metadata: ["method": "\(request.method)"])
                return
            }
            handler(request)
        } else if methods[request.method] != nil {
            logger.debug("a method was sent as a notification; not answered", metadata: ["method": "\(request.method)"])
        } else {
            logger.debug("ignored an unknown notification", metadata: ["method": "\(request.method)"])
        }
    }

    // MARK: Built-in methods

    private func registerBuiltins() {
        register(
            MethodDescription(
                name: "initialize", summary: "Starts the session: says who the server is and what it can do.",
                params: [
                    ["name": "protocolVersion", "schema": ["type": "string"]],
                    ["name": "clientInfo", "schema": ["type": "object"]],
                    ["name": "capabilities", "schema": ["type": "object"]],
                ],
                result: ["name": "InitializeResult", "schema": ["type": "object", "required": ["protocolVersion", "serverInfo", "capabilities"]]]),
            handler: .immediate { [unowned self] request in
                let params = try request.decodeParams(InitializeParams.self)
                try self.initializeHook?(params)
                self.phase = .running
                if let client = params.clientInfo {
                    self.logger.info("initialized", metadata: ["client": "\(client.name) \(client.version ?? "")"])
                }
                return [
                    "protocolVersion": .string(self.identity.protocolVersion),
                    "serverInfo": ["name": .string(self.identity.name), "version": .string(self.identity.version)],
                    "capabilities": self.capabilities,
                ]
            })
        register(
            MethodDescription(name: "ping", summary: "Answers {} at once; allowed before initialize.", result: ["name": "Empty", "schema": ["type": "object"]]),
            handler: .immediate { _ in .object([:]) })
        register(
            MethodDescription(
                name: "shutdown", summary: "Waits for in-flight requests, then answers null; only exit is accepted afterwards.",
                result: ["name": "Null", "schema": ["type": "null"]]),
            handler: .task { [unowned self] request in
                // The phase is already .shuttingDown (set at dispatch). Requests that arrive from now on are refused, so this set is complete.
                for (id, task) in self.inFlight where id != request.id {
                    await task.value
                }
                return .null
            })
        register(
            MethodDescription(name: "rpc.discover", summary: "Returns the OpenRPC document of this server.", result: ["name": "OpenRPC", "schema": ["type": "object"]]),
            handler: .immediate { [unowned self] _ in self.openRPCDocument() })
        describeNotification(MethodDescription(
            name: "exit", summary: "Client to server: ends the process (code 0 after shutdown, 1 otherwise).", result: nil))
        describeNotification(MethodDescription(
            name: "$/cancelRequest", summary: "Client to server: cancels a request in flight, which answers -32800 if that stops it, or its result if its work was already done.",
            params: [["name": "id", "required": true, "schema": ["type": ["integer", "string"]]]], result: nil))
        describeNotification(MethodDescription(
            name: "initialized", summary: "Client to server: accepted and ignored (also notifications/initialized).", result: nil))
        onNotification("exit") { [unowned self] _ in
            self.exitCode = self.phase == .shuttingDown ? 0 : 1
        }
        onNotification("$/cancelRequest") { [unowned self] request in
            guard let raw = request.params?["id"], let id = RequestID(raw) else {
                self.logger.notice("$/cancelRequest without a readable id")
                return
            }
            self.inFlight[id]?.cancel()
        }
        for method in ["initialized", "notifications/initialized", "$/setTrace"] {
            onNotification(method) { _ in }
        }
    }

    /// The OpenRPC 1.3 document of every registered method, sorted by name.
    public func openRPCDocument() -> JSONValue {
        var document: [String: JSONValue] = [
            "openrpc": "1.3.2",
            "info": ["title": .string(identity.name), "version": .string(identity.version)],
            "methods": .array(
                (methods.values.compactMap { $0.1 } + notificationDescriptions).sorted { $0.name < $1.name }.map(\.jsonValue)),
        ]
        document.merge(discoverExtras) { _, extra in extra }
        return .object(document)
    }
}
