import JSON
import JSONPatch
import Observation
import Testing
import Synchronization
@testable import ViewModelBinding

/// What several screens of one shop show: a count they all follow.
@MainActor @Observable
final class SharedTally {
    var count = 0
    var items: [String] = []
}

/// A screen of the shared tally; one that does not follow it yet shows nothing.
@MainActor @Observable
final class TallyViewModel: ScreenViewModel {
    struct State: Codable, Equatable {
        var count: Int
        var items: [String]
        // Members that never change, so that a change is a patch of its parts, not a new state.
        var title = "Tally"
        var unit = "items"
        var labels = ["one", "two", "three"]
    }

    let tally: SharedTally
    private(set) var isFollowing: Bool

    init(tally: SharedTally, isFollowing: Bool) {
        self.tally = tally
        self.isFollowing = isFollowing
    }

    var state: State { isFollowing ? State(count: tally.count, items: tally.items) : State(count: 0, items: []) }

    func follow() { isFollowing = true }
    func appear() {}
    func close() {}
}

/// Whether the next tally screen opened starts without following.
@MainActor
final class LateFlag: Sendable {
    var value = false
}

/// Screens of one type showing equal states share one encoding and, going from equal states, one patch;
/// each still gets the patch from what it showed.
@MainActor @Suite struct SharedEncodingTests {
    let tally = SharedTally()
    /// Whether the next screen opened starts without following.
    let nextIsLate = LateFlag()

    func harness() -> Harness {
        let tally = tally
        let nextIsLate = nextIsLate
        return Harness(definitions: [
            ViewModelDefinition<Void>.screen("tally", actions: []) {
                TallyViewModel(tally: tally, isFollowing: !nextIsLate.value)
            },
        ])
    }

    /// Applies each notification to the mirrors; every mirror must equal `viewModel/get`.
    func expectMirrorsMatch(_ harness: Harness, _ mirrors: inout [String: JSONValue], _ comment: Comment) throws {
        for message in harness.takeMessages() where message["method"] == "viewModel/changed" {
            let params = try #require(message["params"])
            let handle = try #require(params["viewModel"]?.stringValue)
            mirrors[handle] = try JSONPatch(json: try #require(params["patch"])).apply(to: mirrors[handle] ?? .null)
        }
        for (handle, mirror) in mirrors {
            harness.send(99, "viewModel/get", ["viewModel": .string(handle)])
            let state = try #require(harness.takeMessages().first?["result"]?["state"])
            #expect(state == mirror, "\(handle): \(comment)")
        }
    }

    @Test func screensOfEqualStatesEachGetTheirPatch() async throws {
        let harness = harness()
        var mirrors: [String: JSONValue] = [:]
        for id in 1...4 {
            nextIsLate.value = id == 3
            harness.send(Int64(id), "viewModel/open", ["type": "tally"])
            let result = try #require(harness.takeMessages().first?["result"])
            mirrors[try #require(result["viewModel"]?.stringValue)] = result["state"]
        }
        for round in 1...5 {
            tally.count += round
            tally.items.append("item \(round)")
            if round == 3 {
                // In the same turn the late screen starts following: it goes to the same state from another.
                (harness.host.openModel("v3") as! TallyViewModel).follow()
            }
            harness.host.flushDirty(force: true)
            try expectMirrorsMatch(harness, &mirrors, "round \(round)")
        }
        #expect(mirrors["v1"] == mirrors["v3"])
        #expect(mirrors["v1"]?["items"]?.arrayValue?.count == 5)
    }
}

/// How often ``DiffableTallyViewModel``'s state made its own patch.
let diffableTallyPatches = Mutex(0)

/// A tally screen whose state makes its own patch (as the cart's does).
@MainActor @Observable
final class DiffableTallyViewModel: ScreenViewModel {
    struct State: Codable, Equatable, JSONPatchDiffable {
        var count: Int
        var items: [String]
        var title = "Tally"

        func jsonValue(reusing memo: EncodingMemo?) -> JSONValue {
            ["count": .integer(Int64(count)), "items": .array(items.map { .string($0) }), "title": .string(title)]
        }

        func patch(from old: State) -> JSONPatch? {
            diffableTallyPatches.withLock { $0 += 1 }
            guard title == old.title else { return nil }
            var operations: [JSONPatchOperation] = []
            if count != old.count { operations.append(.replace(path: JSONPointer(tokens: ["count"]), value: .integer(Int64(count)))) }
            if items != old.items { operations.append(.replace(path: JSONPointer(tokens: ["items"]), value: .array(items.map { .string($0) }))) }
            return JSONPatch(operations)
        }
    }

    let tally: SharedTally

    init(tally: SharedTally) {
        self.tally = tally
    }

    var state: State { State(count: tally.count, items: tally.items) }

    func appear() {}
    func close() {}
}

/// Screens of a state type that makes its own patch: the same change on two screens is one patch, and no
/// JSON form is built for a change (a snapshot builds it, from the state the client has).
@MainActor @Suite struct OwnPatchSharingTests {
    @Test func screensMakingTheSameChangeShareOnePatchAndBuildNoFormUntilAsked() throws {
        let tally = SharedTally()
        let harness = Harness(definitions: [ViewModelDefinition<Void>.screen("tally", actions: []) { DiffableTallyViewModel(tally: tally) }])
        var mirrors: [String: JSONValue] = [:]
        for id in 1...2 {
            harness.send(Int64(id), "viewModel/open", ["type": "tally"])
            let result = try #require(harness.takeMessages().first?["result"])
            mirrors[try #require(result["viewModel"]?.stringValue)] = result["state"]
        }
        let patchesBefore = diffableTallyPatches.withLock { $0 }
        for round in 1...3 {
            tally.count += round
            tally.items.append("item \(round)")
            harness.host.flushDirty(force: true)
            var notified: Set<String> = []
            for message in harness.takeMessages() where message["method"] == "viewModel/changed" {
                let params = try #require(message["params"])
                let handle = try #require(params["viewModel"]?.stringValue)
                notified.insert(handle)
                mirrors[handle] = try JSONPatch(json: try #require(params["patch"])).apply(to: mirrors[handle] ?? .null)
            }
            #expect(notified == ["v1", "v2"], "round \(round)")
            #expect(diffableTallyPatches.withLock { $0 } - patchesBefore == round, "one patch per change, for both screens")
            #expect(harness.host.holdsForm("v1") == false && harness.host.holdsForm("v2") == false, "round \(round)")
        }
        for handle in ["v1", "v2"] {
            harness.send(9, "viewModel/get", ["viewModel": .string(handle)])
            let result = try #require(harness.takeMessages().first?["result"])
            #expect(result["state"] == mirrors[handle])
            #expect(result["version"] == 4)
            #expect(harness.host.holdsForm(handle) == true)
        }
        #expect(mirrors["v1"]?["items"]?.arrayValue?.count == 3)
    }
}
