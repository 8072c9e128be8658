import JSON
import JSONPatch
import JSONRPC
import Logging
import Observation
import Shop
import Synchronization

/// Puts ViewModels on the wire: `viewModel/open`, `viewModel/close`, `viewModel/get`, one method per
/// action, and the `viewModel/changed` stream of versioned patches.
///
/// Each open ViewModel's state is read under `withObservationTracking` (or, for one that reports its
/// changes itself, ``StateChangeReporting``, as it is); a change marks it dirty, and one flush sends every
/// dirty ViewModel's changes since its last notification as one notification. The flush
/// comes when the connection's loop would wait (``JSONRPC/Connection/beforeWaiting``, the server's stdio
/// loop), else as a main-actor job queued at the first change. Before an action or `viewModel/get` answers,
/// every dirty ViewModel is flushed, so the notifications an action caused are written before its response.
@MainActor
public final class ViewModelHost<Environment> {
    /// How notifications carry changes; set from the client's `initialize` capabilities.
    public var updateMode: StateUpdateMode = .patch
    /// The most ViewModels open at once; opening another is refused.
    public var maxOpenViewModels = 1_000

    /// What the ViewModels are made in (the services); nil for a host that only describes the protocol
    /// (`storefront openrpc`), which refuses to open one.
    public var environment: Environment?
    /// Waits until the work that stored changes caused elsewhere (reloads of other ViewModels) is done;
    /// an action answers after it, so its answer comes after every notification its change caused.
    public var settle: (@MainActor () async -> Void)?
    /// Looks up an idempotency key recorded with a stored change: its request's fingerprint and outcome.
    public var idempotencyRecord: (@MainActor (String) async throws -> (fingerprint: String, outcome: [String: String])?)?
    /// Publishes every change stored so far on this server's ViewModels, and returns once they show it: a keyed
    /// action answered as a replay from inside its write (its key stored meanwhile by another server, with the
    /// same request in flight) is answered after that change is shown, as a first attempt is.
    public var publishStoredChanges: (@MainActor () async -> Void)?
    /// Whose actions these are (the session's shopper): part of a keyed request's fingerprint, so a key
    /// another shopper used is refused (`idempotencyKeyReused`) rather than answered with their outcome.
    public var idempotencyScope: (@MainActor () -> String)?

    private let connection: Connection
    private let logger: Logger
    private let contract: ProtocolContract<Environment>
    private var definitions: [String: ViewModelDefinition<Environment>] = [:]
    private var screens: [String: OpenViewModel] = [:]
    private var nextHandle = 1
    /// The ViewModels whose state changed since their last notification, marked by the observation
    /// callback on whatever thread makes the change, at once.
    private nonisolated let dirty = DirtyList<OpenViewModel>()
    private let admission = ActionAdmission()
    /// The last encoding of each state type, shared by ViewModels showing equal states.
    private let sharedEncodings = SharedEncodings()

    /// A host serving the ViewModel types of `contract` on `connection`, made in `environment`. Call
    /// ``install()`` to register the methods.
    public init(connection: Connection, contract: ProtocolContract<Environment>, environment: Environment?, logger: Logger) {
        self.connection = connection
        self.contract = contract
        self.environment = environment
        self.logger = logger
        for definition in contract.definitions { self.definitions[definition.type] = definition }
        connection.outbox.onDrain = { [weak self] in self?.flushDirty() }
        connection.beforeWaiting = { [weak self, dirty] in
            // Asked before every wait of the loop (every request's): nothing marked is the common case.
            guard dirty.hasMarks else { return }
            self?.flushDirty()
        }
    }

    /// The ViewModel behind an open handle (for tests and tools in-process).
    public func openModel(_ handle: String) -> AnyObject? {
        screens[handle]?.screen.object
    }

    /// Whether an open ViewModel holds the JSON form of the state its client has, or would build it when asked
    /// (for tests: a state type that makes its own patch changes without building one).
    func holdsForm(_ handle: String) -> Bool? {
        screens[handle]?.screen.holdsForm()
    }

    /// Handles of the open ViewModels.
    public var openHandles: [String] { screens.keys.sorted(by: Self.handleOrder) }

    // MARK: Methods

    /// Registers `viewModel/open`, `viewModel/close`, `viewModel/get` and every `<type>/<action>`, each
    /// described as the contract derives it from the definitions' types.
    /// - Throws: ``ContractError`` or a schema error when the contract cannot be derived (a programming error).
    public func install() throws {
        var descriptions = Dictionary(uniqueKeysWithValues: try contract.methodDescriptions().map { ($0.name, $0) })
        // Their states are read when the answer is written: in a batch, after what its other members caused. An
        // opened ViewModel's state is the one its last notification sent (its version's), as at its open.
        connection.register(descriptions.removeValue(forKey: "viewModel/open")!, handler: .immediateSnapshot { [unowned self] request in
            let entry = try self.open(request)
            return { [unowned self] in try self.snapshot(of: entry) }
        })
        connection.register(descriptions.removeValue(forKey: "viewModel/close")!, handler: .immediate { [unowned self] request in
            let entry = try self.entry(for: request, type: nil)
            self.screens[entry.handle] = nil
            entry.screen.close()
            // The ViewModel may outlive its screen (a task of it still ending): its reports go nowhere.
            entry.screen.reportChanges?(nil)
            return .null
        })
        connection.register(descriptions.removeValue(forKey: "viewModel/get")!, handler: .immediateSnapshot { [unowned self] request in
            let entry = try self.entry(for: request, type: nil)
            return { [unowned self] in
                self.flushDirty(force: true)
                return try self.snapshot(of: entry)
            }
        })
        for definition in contract.definitions {
            for action in definition.actions {
                let description = descriptions.removeValue(forKey: "\(definition.type)/\(action.name)")!
                registerAction(action, of: definition, described: description)
            }
        }
        connection.addDiscoverMembers([
            "components": ["schemas": .object(try contract.componentSchemas())],
            "x-viewModels": contract.viewModelIndex,
        ])
    }

    private func registerAction(_ action: ActionDefinition, of definition: ViewModelDefinition<Environment>, described description: MethodDescription) {
        connection.register(
            description,
            handler: .preparedTask { [unowned self] request in
                // The handle as it stands when the request arrives: a close read right after it does not make it
                // invalid params.
                let entry = try self.entry(for: request, type: definition.type)
                return { [unowned self] in try await self.perform(action, on: entry, request) }
            })
    }

    /// Runs `action` on the ViewModel of `entry` for `request`, and returns its result (`version` included).
    private func perform(_ action: ActionDefinition, on entry: OpenViewModel, _ request: Request) async throws -> JSONValue {
        // Closed since the request arrived, before the action started: cancelled, as an action whose screen
        // closes while it runs is (-32800), and nothing is done.
        guard self.screens[entry.handle] === entry else { throw CancellationError() }
        let control = try ActionControl.of(request)
        var key: IdempotencyKey?
        if let text = control.idempotencyKey {
            guard action.stores else {
                throw RPCError.invalidParams(parameter: "idempotencyKey", reason: "is only taken by actions that store something")
            }
            guard (1...IdempotencyKey.maximumLength).contains(text.count) else {
                throw RPCError.invalidParams(
                    parameter: "idempotencyKey", reason: "must have 1 to \(IdempotencyKey.maximumLength) characters")
            }
            key = IdempotencyKey(
                key: text, fingerprint: Self.fingerprint(method: request.method, params: request.params, openedWith: entry.args))
        }
        // Actions start in the order they came, though a keyed one reads its key first.
        await self.admission.enter()
        // Scoped when it starts, not when it arrived: a sign-in answered meanwhile changed the shopper.
        if let scope = self.idempotencyScope, let unscoped = key {
            key = IdempotencyKey(key: unscoped.key, fingerprint: scope() + " " + unscoped.fingerprint)
        }
        var record: (fingerprint: String, outcome: [String: String])?
        if let key, let lookUp = self.idempotencyRecord {
            do {
                record = try await lookUp(key.key)
            } catch {
                self.admission.leave()
                throw error
            }
        }
        self.admission.leave()
        if let key, let record {
            // Stored already (by this server, another, or before a restart): answer, apply nothing.
            guard record.fingerprint == key.fingerprint else { throw ShopError.idempotencyKeyReused(key.key) }
            await self.settle?()
            self.flushDirty(force: true)
            var result = record.outcome.mapValues { JSONValue.string($0) }
            result["version"] = .integer(Int64(entry.version))
            result["replayed"] = true
            return .object(result)
        }
        // After the key: a resend of a change already stored is answered as such, though that change
        // moved the version on.
        if let expected = control.expectedVersion {
            self.flushDirty(force: true)
            guard expected == entry.version else { throw RPCError.versionConflict(expected: expected, current: entry.version) }
        }
        let extras: [String: JSONValue]
        do {
            extras = try await IdempotencyKey.$current.withValue(key) {
                try await action.perform(entry.screen.object, request)
            }
        } catch {
            await self.settle?()
            self.flushDirty(force: true)
            throw error
        }
        // What the stored change caused on every open ViewModel (reloads included) is shown first; a keyed one
        // may have been another server's, found in the write's own transaction.
        if key != nil { await self.publishStoredChanges?() }
        await self.settle?()
        self.flushDirty(force: true)
        var result = extras
        result["version"] = .integer(Int64(entry.version))
        return .object(result)
    }

    /// What a keyed request was: its method and params without the ones that do not change its effect, as
    /// canonical JSON (sorted members), then the args its ViewModel was opened with when there are any (a
    /// product page's product: a key used on one product's page is refused on another's). Not what the
    /// ViewModel holds besides (a quantity chosen, a form's fields, a selection): the request itself changes
    /// those, and its retry, on the same screen or on one opened again in another server, must match it.
    static func fingerprint(method: String, params: JSONValue?, openedWith args: JSONValue) -> String {
        var members = params?.objectValue ?? [:]
        for name in ["viewModel", "expectedVersion", "idempotencyKey"] { members[name] = nil }
        let request = method + " " + JSONValue.object(members).description
        guard case .object(let opened) = args, !opened.isEmpty else { return request }
        return request + " " + args.description
    }

    private func open(_ request: Request) throws -> OpenViewModel {
        let params = try request.decodeParams(OpenParams.self)
        guard let definition = definitions[params.type] else {
            throw RPCError.invalidParams(
                parameter: "type",
                reason: "\"\(params.type)\" is not a ViewModel type; one of \(definitions.keys.sorted().joined(separator: ", "))")
        }
        guard screens.count < maxOpenViewModels else {
            throw RPCError.invalidParams(parameter: "", reason: "too many open ViewModels (limit \(maxOpenViewModels)); close some first")
        }
        let args = params.args ?? .object([:])
        guard case .object = args else {
            throw RPCError.invalidParams(parameter: "args", reason: "must be an object, not \(args.typeName)")
        }
        guard let environment else {
            throw RPCError.internalError("this server only describes the protocol; it cannot open ViewModels")
        }
        let screen: OpenScreen
        do {
            screen = try definition.make(environment, args)
        } catch let error as DecodingError {
            var rpcError = RPCError(from: error)
            if case .string(let parameter)? = rpcError.data?["parameter"] {
                rpcError = .invalidParams(parameter: "args.\(parameter)", reason: rpcError.data?["reason"]?.stringValue ?? "")
            }
            throw rpcError
        }
        let entry = OpenViewModel(number: nextHandle, type: definition.type, args: args, screen: screen)
        nextHandle += 1
        screen.appear()
        _ = try observeState(of: entry)
        // From its first read on (what changed before it, in `appear`, is in it).
        if let reportChanges = screen.reportChanges {
            let handler = changeHandler(for: entry)
            #if DEBUG
            reportChanges { [weak entry] in
                entry?.reports.withLock { $0.reported = true }
                handler()
            }
            #else
            reportChanges(handler)
            #endif
        }
        screens[entry.handle] = entry
        return entry
    }


    /// The state the client has of `entry` (its form built now if the changes since it was last built were
    /// sent as the state type's own patches), with its version and handle.
    private func snapshot(of entry: OpenViewModel) throws -> JSONValue {
        ["viewModel": .string(entry.handle), "version": .integer(Int64(entry.version)), "state": try entry.screen.form()]
    }

    private func entry(for request: Request, type: String?) throws -> OpenViewModel {
        let handle = try HandleParams.handle(of: request)
        guard let entry = screens[handle] else {
            throw RPCError.invalidParams(parameter: "viewModel", reason: "no open ViewModel has the handle \"\(handle)\"")
        }
        if let type, entry.type != type {
            throw RPCError.invalidParams(
                parameter: "viewModel", reason: "\"\(handle)\" is a \(entry.type) ViewModel, not a \(type)")
        }
        return entry
    }

    // MARK: State stream

    /// Reads the state and arranges to hear of its next change; returns the patch from the state read last,
    /// or nil when the two are equal (then nothing is encoded).
    ///
    /// A ViewModel that reports its changes (``StateChangeReporting``) is read as it is: it was told at its
    /// open to call ``changeHandler(for:)``'s handler. Debug builds observe its reads too, and check that
    /// every change observed was reported.
    private func observeState(of entry: OpenViewModel) throws -> StatePatch? {
        guard entry.screen.reportChanges != nil else { return try trackedRead(of: entry, onChange: changeHandler(for: entry)) }
        #if DEBUG
        let unreported = entry.reports.withLock { reports in
            defer { reports = (false, false) }
            return reports.observed && !reports.reported
        }
        assert(!unreported, "a \(entry.type) ViewModel changed what its state reads without reporting it")
        let handler = changeHandler(for: entry)
        return try trackedRead(of: entry) { [weak entry] in
            entry?.reports.withLock { $0.observed = true }
            handler()
        }
        #else
        return try entry.screen.readChangedState(sharedEncodings)
        #endif
    }

    /// Reads the state under Observation's tracking: `onChange` is called once, before the first change of what
    /// the read used.
    private func trackedRead(of entry: OpenViewModel, onChange: @escaping @Sendable () -> Void) throws -> StatePatch? {
        var result: Result<StatePatch?, any Error> = .success(nil)
        withObservationTracking({
            result = Result { try entry.screen.readChangedState(sharedEncodings) }
        }, onChange: onChange)
        return try result.get()
    }

    /// What to do when `entry`'s state may have changed, called on the thread that changes it: Observation's
    /// callback, once before the first change after a read, or a reporting ViewModel's report after each.
    private func changeHandler(for entry: OpenViewModel) -> @Sendable () -> Void {
        let executor = connection.taskExecutor
        // The list is held weakly: a reporting ViewModel keeps this handler as long as it lives, and the list holds
        // the marked ViewModels until a flush takes them (a cycle, with a host dropped before its flush).
        return { [weak self, weak dirty, weak entry, executor, weak connection] in
            // The flag is set at once, so an action finishing later flushes it before answering. The changes
            // made until the flush become one notification (Observation's tracking is spent until the flush
            // reads the state again; later reports find the screen marked). One flush serves all the
            // ViewModels marked before it takes them (while the output is held back, the drain flushes them
            // instead).
            guard let entry, let dirty, dirty.mark(entry) else { return }
            // Served by a loop that flushes before it waits (the server's): the flush comes once the main
            // thread has run what it queued, so an action whose work never waits (a checkout committed
            // inline) sends its states with its answer, and a state that lasts while the server waits (a
            // write behind another process's lock, a password's hashing) is sent as it waits.
            // (The ViewModels are `@MainActor`: their changes are made by the loop's own jobs, so the loop
            // comes to that point after them. A change from another thread would not wake a loop in `poll`.)
            if connection?.runsBeforeWaiting == true { return }
            // Otherwise the flush runs as a job after the current one.
            if let executor {
                // Queued where the connection's requests run (the transport's own queue, not the main
                // dispatch queue: no descriptor written for it).
                Task(executorPreference: executor) { await self?.flushDirty() }
            } else {
                Task { @MainActor in self?.flushDirty() }
            }
        }
    }

    /// Sends one `viewModel/changed` for each ViewModel that changed since its last notification.
    ///
    /// While the client is not reading (the outbox is congested) changes are held back, unless `force`
    /// (an action or `viewModel/get` is about to answer and its notifications must come first): the
    /// ViewModels stay marked, and when the output drains each sends one patch from the last version the
    /// client got to its current state. Memory stays bounded by one state per ViewModel.
    ///
    /// - Parameter force: send even while the output is congested.
    public func flushDirty(force: Bool = false) {
        guard force || !connection.outbox.shouldHoldBack() else { return }
        for entry in dirty.take() {
            // A ViewModel closed since its change is gone.
            guard let open = screens[entry.handle], open === entry else { continue }
            let handle = entry.handle
            let read: StatePatch?
            do {
                read = try observeState(of: entry)
            } catch {
                logger.error("could not encode a ViewModel's state", metadata: ["viewModel": "\(handle)", "error": "\(error)"])
                continue
            }
            // Equal states, or forms: the client has this state already.
            guard let read, !read.patch.isEmpty else { continue }
            // Sent whole to a client that asked for snapshots: the form is built (the patch may not have). Only a
            // state that made its own patch has none yet, and its form (`JSONValueConvertible`) cannot fail; a
            // failure here would leave the client a version behind, with `viewModel/get` failing too.
            var state: JSONValue?
            if updateMode == .snapshot {
                do {
                    state = try entry.screen.form()
                } catch {
                    logger.error("could not encode a ViewModel's state", metadata: ["viewModel": "\(handle)", "error": "\(error)"])
                    continue
                }
            }
            entry.version += 1
            let version = Int64(entry.version)
            switch updateMode {
            case .patch:
                // Written straight from the patch (members in key order, as every message is written); a patch
                // another ViewModel sent in this flush is serialised already.
                let patchBytes = read.bytes
                connection.notify("viewModel/changed") { buffer in
                    buffer.append(contentsOf: #"{"patch":"#.utf8)
                    buffer.append(contentsOf: patchBytes)
                    buffer.append(contentsOf: #","version":"#.utf8)
                    JSONValue.integer(version).serialize(into: &buffer)
                    buffer.append(contentsOf: #","viewModel":"#.utf8)
                    JSONValue.string(handle).serialize(into: &buffer)
                    buffer.append(UInt8(ascii: "}"))
                }
            case .snapshot:
                connection.notify(
                    "viewModel/changed",
                    params: ["viewModel": .string(handle), "version": .integer(version), "state": state ?? .null])
            }
        }
    }

    private static func handleOrder(_ a: String, _ b: String) -> Bool {
        (a.count, a) < (b.count, b)
    }
}

/// The open ViewModels marked as changed: marked from any thread, taken on the main actor. A flush looks
/// at these only, not at every open ViewModel.
///
/// Typed by its entries, so that taking them needs no cast; a flush takes one or two (an action's own
/// screen and another showing the same data), so they are ordered and made unique in place, with no set.
final class DirtyList<Entry: DirtyEntry>: Sendable {
    private let marked = Mutex<[Entry]>([])
    /// Whether anything is marked: set and cleared with the marks (under their lock), read without it.
    private let anyMarked = Atomic<Bool>(false)

    /// Whether a ViewModel is marked (a flush would take it). Marks are made where the ViewModels change, on
    /// the main actor, so a read there sees every mark made before it.
    var hasMarks: Bool { anyMarked.load(ordering: .acquiring) }

    /// Marks a ViewModel as changed.
    /// - Returns: Whether it is the first mark since the marks were last taken (a flush is then due).
    func mark(_ entry: Entry) -> Bool {
        marked.withLock { marked in
            // A reporting ViewModel reports each of a change's steps: marked once for them.
            if marked.last === entry { return false }
            marked.append(entry)
            anyMarked.store(true, ordering: .releasing)
            return marked.count == 1
        }
    }

    /// The ViewModels marked since the last call, each once, in the order of their handles; clears the marks.
    func take() -> [Entry] {
        var taken = marked.withLock { marked -> [Entry] in
            // Nothing marked (most calls: the loop asks before every wait): nothing to hand over.
            guard !marked.isEmpty else { return [] }
            anyMarked.store(false, ordering: .releasing)
            var taken: [Entry] = []
            swap(&taken, &marked)
            return taken
        }
        guard taken.count > 1 else { return taken }
        taken.sort { $0.number < $1.number }
        // A ViewModel marked twice (its tracking spent, then read and marked again before this flush, or
        // reporting again after another's mark) is next to itself now.
        var kept = 1
        for index in 1..<taken.count where taken[index] !== taken[kept - 1] {
            taken.swapAt(kept, index)
            kept += 1
        }
        taken.removeLast(taken.count - kept)
        return taken
    }
}

/// What ``DirtyList`` knows of an open ViewModel.
protocol DirtyEntry: AnyObject, Sendable {
    /// Its handle's number, which orders the notifications of one flush.
    var number: Int { get }
}

/// One open ViewModel. Not nested in the host, which is generic: its type's metadata, asked for at each mark
/// and flush, is then static, not looked up at run time.
@MainActor
private final class OpenViewModel: DirtyEntry {
    /// The number in the handle (`v7`: 7), which orders the notifications of one flush.
    nonisolated let number: Int
    let handle: String
    /// Its type's wire name (`cart`).
    let type: String
    let screen: OpenScreen
    /// The args it was opened with (`{}` for none), which a keyed request's fingerprint holds.
    let args: JSONValue
    var version = 1
    #if DEBUG
    /// Whether Observation saw a change of what the state reads since the last read, and whether the
    /// ViewModel reported one (``StateChangeReporting``; checked at the next read).
    nonisolated let reports = Mutex((observed: false, reported: false))
    #endif

    init(number: Int, type: String, args: JSONValue, screen: OpenScreen) {
        self.number = number
        self.handle = "v\(number)"
        self.type = type
        self.args = args
        self.screen = screen
    }
}

/// `viewModel/open` params.
private struct OpenParams: Decodable {
    var type: String
    var args: JSONValue?
}

/// Params naming an open ViewModel.
private struct HandleParams: Decodable {
    var viewModel: String

    /// The request's `viewModel`: read in place when it is a string member (every action reads it), else
    /// decoded, which throws the decoder's error.
    static func handle(of request: Request) throws -> String {
        if case .object(let members)? = request.params, case .string(let handle)? = members["viewModel"] { return handle }
        return try request.decodeParams(HandleParams.self).viewModel
    }
}

/// The params every action takes besides its own.
private struct ActionControl: Decodable {
    /// The ViewModel version the client acted on.
    var expectedVersion: Int?
    /// A key that makes a retry of a storing action answer the first result instead of applying again.
    var idempotencyKey: String?

    /// The request's control params: none without either member (most actions; no decoder is run), else
    /// decoded, which throws the decoder's error for a member of the wrong type.
    static func of(_ request: Request) throws -> ActionControl {
        if case .object(let members)? = request.params, members["expectedVersion"] == nil, members["idempotencyKey"] == nil {
            return ActionControl()
        }
        return try request.decodeParams(ActionControl.self)
    }
}
