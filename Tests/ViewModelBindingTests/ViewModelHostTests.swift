import JSON
import JSONPatch
import JSONRPC
import Logging
import Observation
import JSONSchema
import Testing
@testable import ViewModelBinding

/// A small ViewModel standing in for the shop's, so that the host is tested on its own.
@MainActor @Observable
final class CounterViewModel: ScreenViewModel {
    struct State: Codable, Equatable {
        var phase: String
        var count: Int
        var log: [String]
    }

    private(set) var phase = "idle"
    private(set) var count = 0
    private(set) var log: [String] = []
    /// Read by `state` but not part of it: changing it marks the ViewModel changed with an equal state.
    private(set) var revision = 0
    @ObservationIgnored private(set) var closed = false
    /// How many times `state` was read.
    @ObservationIgnored private(set) var stateReads = 0

    var state: State {
        stateReads += 1
        _ = revision
        return State(phase: phase, count: count, log: log)
    }

    /// A change of something the state reads that leaves the state as it was.
    func touch() { revision += 1 }

    func appear() { phase = "loading" }
    func close() { closed = true }

    /// Two changes in one turn.
    func incrementTwice() {
        count += 1
        count += 1
        log.append("+2")
    }

    func finishLoading() async {
        await Task.yield()
        phase = "loaded"
    }
}

@MainActor
struct Harness {
    let outbox = Outbox()
    let connection: Connection
    let host: ViewModelHost<Void>

    init(
        mode: StateUpdateMode = .patch, definitions: [ViewModelDefinition<Void>] = [Harness.counter],
        vocabulary: @escaping @Sendable (SchemaGenerator) -> Void = { _ in }
    ) {
        connection = Connection(
            identity: ServerIdentity(name: "test", version: "0", protocolVersion: "0"), outbox: outbox,
            logger: Logger(label: "test"))
        host = ViewModelHost(
            connection: connection, contract: ProtocolContract(definitions: definitions, vocabulary: vocabulary), environment: (), logger: Logger(label: "test"))
        host.updateMode = mode
        try! host.install()
        connection.receive(["jsonrpc": "2.0", "id": 0, "method": "initialize", "params": [:]])
        _ = takeMessages()
    }

    static let counter = ViewModelDefinition<Void>.screen(
        "counter",
        actions: [
            .action("incrementTwice", summary: "", on: CounterViewModel.self) { model in
                model.incrementTwice()
                return [:]
            },
            .action("touch", summary: "", on: CounterViewModel.self) { model in
                model.touch()
                return [:]
            },
            .action("finishLoading", summary: "", on: CounterViewModel.self) { model in
                await model.finishLoading()
                return ["extra": true]
            },
        ],
        make: { CounterViewModel() })

    func send(_ id: Int64, _ method: String, _ params: JSONValue) {
        connection.receive(["jsonrpc": "2.0", "id": .integer(id), "method": .string(method), "params": params])
    }

    /// Lets tasks on the main actor run until no request is in flight and no flush is pending.
    func settle(sourceLocation: SourceLocation = #_sourceLocation) async {
        await settle(until: { connection.inFlightCount == 0 }, sourceLocation: sourceLocation)
    }

    /// Lets tasks run until `condition` holds and then until no flush is pending (the flush that a change
    /// schedules is a main-actor job queued behind it). Fails a stuck test only once 1 000 turns and 30 s
    /// are both spent: a service that answers from another thread needs that thread to be scheduled,
    /// which no number of turns guarantees on a loaded machine, and other suites' synchronous main-actor
    /// tests can hold the main actor for longer than 30 s, during which no task here runs.
    func settle(until condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
        let deadline = ContinuousClock.now + .seconds(30)
        var turns = 0
        repeat {
            await Task.yield()
            turns += 1
        } while !condition() && (turns < 1_000 || ContinuousClock.now < deadline)
        #expect(condition(), "the expected state was never reached", sourceLocation: sourceLocation)
        for _ in 0..<10 { await Task.yield() }
    }

    /// The messages written so far, parsed, and clears the outbox.
    func takeMessages() -> [JSONValue] {
        let lines = outbox.pending.split(separator: 0x0A)
        outbox.consume(outbox.pending.count)
        return lines.map { try! JSONValue(parsing: Array($0)) }
    }
}

@MainActor @Suite struct ViewModelHostTests {
    @Test func openingReturnsTheAppearedStateAtVersionOne() {
        let harness = Harness()
        harness.send(1, "viewModel/open", ["type": "counter"])
        let messages = harness.takeMessages()
        #expect(messages == [[
            "jsonrpc": "2.0", "id": 1,
            "result": ["viewModel": "v1", "version": 1, "state": ["phase": "loading", "count": 0, "log": []]],
        ]])
    }

    @Test func anActionsNotificationsComeBeforeItsResponseAndChangesInOneTurnAreOne() async throws {
        let harness = Harness()
        harness.send(1, "viewModel/open", ["type": "counter"])
        _ = harness.takeMessages()
        harness.send(2, "counter/incrementTwice", ["viewModel": "v1"])
        await harness.settle()
        let messages = harness.takeMessages()
        try #require(messages.count == 2, "\(messages)")
        #expect(messages[0]["method"] == "viewModel/changed", "\(messages)")
        #expect(messages[0]["params"]?["version"] == 2)
        let patch = try JSONPatch(json: try #require(messages[0]["params"]?["patch"]))
        #expect(try patch.apply(to: ["phase": "loading", "count": 0, "log": []]) == ["phase": "loading", "count": 2, "log": ["+2"]])
        #expect(messages[1] == ["jsonrpc": "2.0", "id": 2, "result": ["version": 2]])
    }

    @Test func aChangeThatLeavesTheStateEqualSendsNothingAndKeepsTheVersion() async throws {
        let harness = Harness()
        harness.send(1, "viewModel/open", ["type": "counter"])
        _ = harness.takeMessages()
        let model = try #require(harness.host.openModel("v1") as? CounterViewModel)
        let reads = model.stateReads
        harness.send(2, "counter/touch", ["viewModel": "v1"])
        await harness.settle()
        #expect(harness.takeMessages() == [["jsonrpc": "2.0", "id": 2, "result": ["version": 1]]])
        #expect(model.stateReads == reads + 1, "the state is read again (to observe it), once")
        // A real change after it is diffed against the state last sent.
        harness.send(3, "counter/incrementTwice", ["viewModel": "v1"])
        await harness.settle()
        let messages = harness.takeMessages()
        #expect(messages.first?["params"]?["version"] == 2)
        let patch = try JSONPatch(json: try #require(messages.first?["params"]?["patch"]))
        #expect(try patch.apply(to: ["phase": "loading", "count": 0, "log": []]) == ["phase": "loading", "count": 2, "log": ["+2"]])
    }

    @Test func changesOfSeveralViewModelsInOneTurnAreSentInHandleOrder() async throws {
        let harness = Harness()
        for id in 1...11 { harness.send(Int64(id), "viewModel/open", ["type": "counter"]) }
        _ = harness.takeMessages()
        // v11 changes before v2 in the same turn; the flush sends v2 first (v10 < v11 as numbers, not text).
        for handle in ["v11", "v2", "v10"] { (harness.host.openModel(handle) as! CounterViewModel).incrementTwice() }
        harness.host.flushDirty(force: true)
        let handles = harness.takeMessages().compactMap { $0["params"]?["viewModel"]?.stringValue }
        #expect(handles == ["v2", "v10", "v11"])
    }

    @Test func versionsRiseByOnePerNotificationAndGetMatchesTheMirror() async throws {
        let harness = Harness()
        harness.send(1, "viewModel/open", ["type": "counter"])
        var mirror = try #require(harness.takeMessages().first?["result"]?["state"])
        var version: Int64 = 1
        for id in 2...6 {
            harness.send(Int64(id), "counter/incrementTwice", ["viewModel": "v1"])
            await harness.settle()
        }
        harness.send(7, "counter/finishLoading", ["viewModel": "v1"])
        await harness.settle()
        for message in harness.takeMessages() where message["method"] == "viewModel/changed" {
            let params = try #require(message["params"])
            #expect(params["version"] == .integer(version + 1))
            version += 1
            mirror = try JSONPatch(json: try #require(params["patch"])).apply(to: mirror)
        }
        harness.send(8, "viewModel/get", ["viewModel": "v1"])
        let get = try #require(harness.takeMessages().first?["result"])
        #expect(get["version"] == .integer(version))
        #expect(get["state"] == mirror)
        #expect(mirror["phase"] == "loaded")
        #expect(mirror["count"] == 10)
    }

    @Test func snapshotModeSendsWholeStates() async throws {
        let harness = Harness(mode: .snapshot)
        harness.send(1, "viewModel/open", ["type": "counter"])
        _ = harness.takeMessages()
        harness.send(2, "counter/incrementTwice", ["viewModel": "v1"])
        await harness.settle()
        let notification = try #require(harness.takeMessages().first)
        #expect(notification["params"] == ["viewModel": "v1", "version": 2, "state": ["phase": "loading", "count": 2, "log": ["+2"]]])
    }

    @Test func unknownHandlesWrongTypesAndClosedViewModelsAreInvalidParams() async throws {
        let harness = Harness()
        harness.send(1, "viewModel/open", ["type": "nope"])
        harness.send(2, "viewModel/get", ["viewModel": "v9"])
        harness.send(3, "counter/incrementTwice", [:])
        harness.send(4, "viewModel/open", ["type": "counter"])
        harness.send(5, "viewModel/close", ["viewModel": "v1"])
        harness.send(6, "counter/incrementTwice", ["viewModel": "v1"])
        await harness.settle()
        let messages = harness.takeMessages().sorted { ($0["id"]?.integerValue ?? 0) < ($1["id"]?.integerValue ?? 0) }
        let codes = messages.map { $0["error"]?["code"] }
        #expect(codes == [-32602, -32602, -32602, nil, nil, -32602])
        #expect(messages[0]["error"]?["data"]?["parameter"] == "type")
        #expect(messages[2]["error"]?["data"]?["parameter"] == "viewModel")
        #expect(messages[5]["error"]?["message"]?.stringValue?.contains("v1") == true)
    }

    /// The handle and the control params every action reads (read in place when they are well formed) are
    /// refused as the decoder refuses them: invalid params naming the member.
    @Test func aHandleOrControlParamOfTheWrongTypeIsInvalidParamsNamingIt() async throws {
        let harness = Harness()
        harness.send(1, "viewModel/open", ["type": "counter"])
        await harness.settle()
        _ = harness.takeMessages()
        harness.send(2, "counter/incrementTwice", ["viewModel": 42])
        harness.send(3, "counter/incrementTwice", ["viewModel": "v1", "expectedVersion": "1"])
        harness.send(4, "counter/incrementTwice", ["viewModel": "v1", "idempotencyKey": 5])
        harness.send(5, "counter/incrementTwice", ["viewModel": "v1", "expectedVersion": .null, "idempotencyKey": .null])
        harness.send(6, "counter/incrementTwice", ["v1"])
        harness.send(7, "counter/incrementTwice", ["viewModel": "v1", "expectedVersion": 1.5])
        await harness.settle()
        let answers = harness.takeMessages().filter { $0["id"] != nil }.sorted { ($0["id"]?.integerValue ?? 0) < ($1["id"]?.integerValue ?? 0) }
        #expect(answers.map { $0["error"]?["code"] } == [-32602, -32602, -32602, nil, -32602, -32602])
        #expect(answers.map { $0["error"]?["data"]?["parameter"] } == ["viewModel", "expectedVersion", "idempotencyKey", nil, "", "expectedVersion"])
        #expect(answers[3]["result"] != nil, "null control params read as absent")
    }

    @Test func closingCallsCloseAndStopsTheStream() async throws {
        let harness = Harness()
        harness.send(1, "viewModel/open", ["type": "counter"])
        _ = harness.takeMessages()
        harness.send(2, "viewModel/close", ["viewModel": "v1"])
        await harness.settle()
        #expect(harness.takeMessages() == [["jsonrpc": "2.0", "id": 2, "result": nil]])
        #expect(harness.host.openHandles.isEmpty)
    }

    @Test func servedByALoopThatFlushesBeforeWaitingChangesAreSentAtThatPointAsOne() async throws {
        let harness = Harness()
        harness.send(1, "viewModel/open", ["type": "counter"])
        _ = harness.takeMessages()
        // As `StdioTransport` serves a connection (here from after the open): it calls `beforeWaiting` when it
        // would wait.
        harness.connection.runsBeforeWaiting = true
        let model = try #require(harness.host.openModel("v1") as? CounterViewModel)
        // Changes in several turns, the main actor's jobs run: no job of the host's sends them.
        model.incrementTwice()
        await harness.settle()
        model.incrementTwice()
        await harness.settle()
        #expect(harness.takeMessages() == [])
        harness.connection.beforeWaiting?()
        let messages = harness.takeMessages()
        try #require(messages.count == 1, "\(messages)")
        #expect(messages[0]["params"]?["version"] == 2)
        let patch = try JSONPatch(json: try #require(messages[0]["params"]?["patch"]))
        #expect(try patch.apply(to: ["phase": "loading", "count": 0, "log": []]) == ["phase": "loading", "count": 4, "log": ["+2", "+2"]])
        // Nothing changed since: nothing more, and the state is not even read; an action still sends its
        // changes before its answer.
        let reads = model.stateReads
        harness.connection.beforeWaiting?()
        #expect(harness.takeMessages() == [])
        #expect(model.stateReads == reads)
        harness.send(2, "counter/incrementTwice", ["viewModel": "v1"])
        await harness.settle()
        let answered = harness.takeMessages()
        #expect(answered.map { $0["params"]?["version"] ?? $0["result"]?["version"] } == [3, 3], "\(answered)")
        // The transport stopped: a change is flushed by a job of its own again.
        harness.connection.runsBeforeWaiting = false
        model.incrementTwice()
        await harness.settle()
        #expect(harness.takeMessages().map { $0["params"]?["version"] } == [4])
    }

    @Test func theDirtyListSaysWhetherAnythingIsMarkedUntilTheMarksAreTaken() {
        final class Marked: DirtyEntry {
            let number: Int
            init(_ number: Int) { self.number = number }
        }
        let list = DirtyList<Marked>()
        #expect(!list.hasMarks)
        let two = Marked(2), one = Marked(1), three = Marked(3)
        #expect(list.mark(two))
        #expect(!list.mark(three), "only the first mark since the last take asks for a flush")
        #expect(!list.mark(two))
        #expect(!list.mark(one))
        #expect(!list.mark(three))
        #expect(list.hasMarks)
        #expect(list.take().map(\.number) == [1, 2, 3], "each once, in the order of their handles")
        #expect(!list.hasMarks, "the loop asks before every wait: nothing to flush")
        #expect(list.take().isEmpty && !list.hasMarks)
        #expect(list.mark(one), "the first mark after a take asks for a flush again")
        #expect(list.take().map(\.number) == [1])
    }

    @Test func whileTheClientIsNotReadingChangesAreCoalescedIntoOnePatch() async throws {
        let harness = Harness()
        harness.send(1, "viewModel/open", ["type": "counter"])
        harness.outbox.highWatermark = 0  // anything pending counts as congested
        harness.outbox.lowWatermark = 0
        let model = try #require(harness.host.openModel("v1") as? CounterViewModel)
        for _ in 0..<5 {
            model.incrementTwice()
            await harness.settle()
        }
        let held = harness.takeMessages()
        #expect(held.count == 1, "only the open's answer was written while congested: \(held)")
        harness.outbox.noteWritten()  // the client read everything
        await harness.settle()
        let messages = harness.takeMessages()
        #expect(messages.count == 1)
        #expect(messages.first?["params"]?["version"] == 2)
        let patch = try JSONPatch(json: try #require(messages.first?["params"]?["patch"]))
        #expect(try patch.apply(to: ["phase": "loading", "count": 0, "log": []])
            == ["phase": "loading", "count": 10, "log": ["+2", "+2", "+2", "+2", "+2"]])
    }
}
