import Foundation
import JSON
import JSONRPC
import Testing
@testable import FuzzHarness

/// The checks themselves, on hand-written output: each kind of broken promise is reported, and a correct
/// exchange is not.
@Suite struct OutputCheckerTests {
    /// The violations found in `output` (one message per line) for `input` (one message per line), both
    /// after an `initialize` and its answer unless `initialized` is false.
    func violations(input: [String], output: [String], framing: Framing = .newlineDelimited, initialized: Bool = true) -> [String] {
        let input = (initialized ? [#"{"jsonrpc":"2.0","id":"init","method":"initialize"}"#] : []) + input
        let output = (initialized ? [#"{"jsonrpc":"2.0","id":"init","result":{}}"#] : []) + output
        var expected = ExpectedAnswers(maxBatchLength: 4)
        for line in input { expected.noteMessage(ArraySlice(line.utf8)) }
        var bytes: [UInt8] = []
        for line in output { framing.frame(Array(line.utf8), into: &bytes) }
        var checker = OutputChecker()
        checker.check(output: bytes, framing: framing, expected: expected)
        return checker.violations
    }

    let open = #"{"jsonrpc":"2.0","id":1,"method":"viewModel/open","params":{"type":"counter"}}"#
    let opened = #"{"jsonrpc":"2.0","id":1,"result":{"viewModel":"v1","version":1,"state":{"count":0}}}"#

    func changed(version: Int, patch: String) -> String {
        #"{"jsonrpc":"2.0","method":"viewModel/changed","params":{"viewModel":"v1","version":\#(version),"patch":\#(patch)}}"#
    }

    @Test func aCorrectExchangeHasNoViolations() {
        let input = [
            open, #"{"jsonrpc":"2.0","id":2,"method":"counter/increment","params":{"viewModel":"v1"}}"#,
            #"{"jsonrpc":"2.0","method":"initialized"}"#, "{", #"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"x"},7]"#,
            #"{"jsonrpc":"2.0","id":3,"method":"viewModel/get","params":{"viewModel":"v1"}}"#,
        ]
        let output = [
            opened,
            changed(version: 2, patch: #"[{"op":"replace","path":"/count","value":1}]"#),
            #"{"jsonrpc":"2.0","id":2,"result":{"version":2}}"#,
            #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            #"[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}},{"jsonrpc":"2.0","id":"a","result":{}}]"#,
            #"{"jsonrpc":"2.0","id":3,"result":{"viewModel":"v1","version":2,"state":{"count":1}}}"#,
        ]
        #expect(violations(input: input, output: output) == [])
        #expect(violations(input: input, output: output, framing: .contentLength) == [])
    }

    @Test func aRequestAnsweredNeverOrTwiceIsReported() {
        let ping = #"{"jsonrpc":"2.0","id":7,"method":"ping"}"#
        let pong = #"{"jsonrpc":"2.0","id":7,"result":{}}"#
        #expect(violations(input: [ping], output: []) == ["id 7: 1 answers owed, 0 written"])
        #expect(violations(input: [ping], output: [pong, pong]) == ["id 7: 1 answers owed, 2 written"])
        #expect(violations(input: [#"{"jsonrpc":"2.0","method":"ping"}"#], output: [pong]) == ["id 7: 0 answers owed, 1 written"])
    }

    @Test func anInvalidMessageAnsweredWithAResultIsReported() {
        #expect(violations(input: [#"{"id":7,"method":"ping"}"#], output: [#"{"jsonrpc":"2.0","id":7,"result":{}}"#])
            == ["id 7: 1 invalid messages owe an error, 0 errors written"])
    }

    @Test func aBatchAnsweredPieceByPieceIsReported() {
        let batch = #"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#
        let found = violations(input: [batch], output: [#"{"jsonrpc":"2.0","id":1,"result":{}}"#, #"[{"jsonrpc":"2.0","id":2,"result":{}}]"#])
        #expect(found.count == 2, "\(found)")
        #expect(found.contains { $0.hasPrefix("batch answers owed [[1, 2]], written [[2]]") }, "\(found)")
    }

    @Test func malformedOutputIsReported() {
        let ping = #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
        #expect(violations(input: [ping], output: [#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#])
            == [#"a response has not exactly one of result and error: {"error":{"code":1,"message":"m"},"id":1,"jsonrpc":"2.0","result":{}}"#])
        #expect(violations(input: [ping], output: [#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#]).count == 1)
        #expect(violations(input: [ping], output: [#"{"jsonrpc":"2.0","id":1,"result":{}"#]).count == 2)  // unparsable, so unanswered
        #expect(violations(input: [], output: [#"{"jsonrpc":"2.0","method":"viewModel/changed"}"#]).count == 1)
    }

    @Test func aVersionGapOrAPatchThatDoesNotApplyIsReported() {
        let gap = violations(input: [open], output: [opened, changed(version: 3, patch: "[]")])
        #expect(gap == ["v1: notification version 3 after 1"])
        let badPatch = violations(input: [open], output: [opened, changed(version: 2, patch: #"[{"op":"remove","path":"/missing"}]"#)])
        #expect(badPatch.count == 1 && badPatch[0].hasPrefix("v1: patch to version 2 does not apply"), "\(badPatch)")
    }

    @Test func anActionAnsweredBeforeItsNotificationIsReported() {
        let action = #"{"jsonrpc":"2.0","id":2,"method":"counter/increment","params":{"viewModel":"v1"}}"#
        let found = violations(input: [open, action], output: [
            opened, #"{"jsonrpc":"2.0","id":2,"result":{"version":2}}"#,
            changed(version: 2, patch: #"[{"op":"replace","path":"/count","value":1}]"#),
        ])
        #expect(found == ["counter/increment on v1 answered version 2 before its notification (last sent 1)"])
    }

    @Test func aGetThatDisagreesWithThePatchedMirrorIsReported() {
        let get = #"{"jsonrpc":"2.0","id":2,"method":"viewModel/get","params":{"viewModel":"v1"}}"#
        let found = violations(input: [open, get], output: [
            opened, changed(version: 2, patch: #"[{"op":"replace","path":"/count","value":1}]"#),
            #"{"jsonrpc":"2.0","id":2,"result":{"viewModel":"v1","version":2,"state":{"count":5}}}"#,
        ])
        #expect(found == ["v1: an answer's state differs from the patched mirror at version 2"])
    }

    @Test func anOpenIsRecognisedWhateverIdsTheInputReuses() {
        let reused = [#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, open]
        let output = [
            #"{"jsonrpc":"2.0","id":1,"result":{}}"#, opened,
            changed(version: 2, patch: #"[{"op":"replace","path":"/count","value":"x"}]"#),
            #"{"jsonrpc":"2.0","id":"g","result":{"viewModel":"v1","version":2,"state":{"count":1}}}"#,
        ]
        var input = reused
        input.append(#"{"jsonrpc":"2.0","id":"g","method":"viewModel/get","params":{"viewModel":"v1"}}"#)
        #expect(violations(input: input, output: output) == ["v1: an answer's state differs from the patched mirror at version 2"])
    }

    @Test func lifecycleRulesAreChecked() {
        let ping = #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
        let open = #"{"jsonrpc":"2.0","id":2,"method":"viewModel/open","params":{"type":"cart"}}"#
        let refused = #"{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Server not initialized"}}"#
        #expect(violations(input: [ping, open], output: [#"{"jsonrpc":"2.0","id":1,"result":{}}"#, refused], initialized: false) == [])
        #expect(violations(input: [open], output: [opened.replacingOccurrences(of: #""id":1"#, with: #""id":2"#)], initialized: false)
            == ["viewModel/open (id 2) before initialize was not refused with -32002"])

        let action = #"{"jsonrpc":"2.0","id":3,"method":"cart/clear","params":{"viewModel":"v1"}}"#
        let shutdown = #"{"jsonrpc":"2.0","id":4,"method":"shutdown"}"#
        #expect(violations(input: [action, shutdown, ping], output: [
            #"{"jsonrpc":"2.0","id":4,"result":null}"#, #"{"jsonrpc":"2.0","id":3,"result":{"version":1}}"#,
            #"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        ]) == ["shutdown answered before cart/clear (id 3), dispatched before it", "ping (id 1) after shutdown succeeded"])

        let close = #"{"jsonrpc":"2.0","id":5,"method":"viewModel/close","params":{"viewModel":"v1"}}"#
        #expect(violations(input: [self.open, close], output: [
            opened, #"{"jsonrpc":"2.0","id":5,"result":null}"#, changed(version: 2, patch: "[]"),
        ]) == ["v1 sent a notification (message 3) after its close answered (message 2)"])

        #expect(violations(input: [#"{"jsonrpc":"2.0","id":6,"method":"cart/add","params":{}}"#], output: [
            #"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params"}}"#,
        ]) == [#"cart/add (id 6) answered error {"code":-32602,"message":"Invalid params"} without the documented data"#])
    }

    @Test func workShownInProgressIsFoundAtAnyDepth() {
        let state: JSONValue = [
            "phase": "loaded", "checkoutPhase": "submitting", "isLoadingMore": true,
            "featured": ["phase": "loading"], "recent": ["phase": "failed"], "isLoadingNothing": false,
        ]
        #expect(FuzzHarness.workShownInProgress(state) == [
            #"/checkoutPhase = "submitting""#, #"/featured/phase = "loading""#, "/isLoadingMore = true",
        ])
    }

    @Test func aChunkPlanCoversTheInputAndDependsOnlyOnIt() {
        let input = Array(repeating: UInt8(ascii: "x"), count: 5_000) + Array("tail".utf8)
        let plan = ChunkPlan(for: input)
        #expect(plan.lengths.reduce(0, +) == input.count)
        #expect(plan.lengths.allSatisfy { $0 > 0 })
        #expect(ChunkPlan(for: input) == plan)
        #expect(plan.chunks(of: input).flatMap { $0 } == input)
        #expect(ChunkPlan(for: []).lengths == [])
        #expect(plan.waits.count == plan.lengths.count)
    }

    @Test func aLinesDirectiveSendsOneLinePerReadAndWaitsAfterEach() {
        let input = Array("#!lines\n{\"a\":1}\n\n{\"b\":2}".utf8)
        let plan = ChunkPlan(for: input)
        #expect(plan.chunks(of: input).map { String(decoding: $0, as: UTF8.self) } == ["{\"a\":1}\n", "\n", "{\"b\":2}"])
        #expect(plan.waits == [true, true, true])
        #expect(Array(plan.body(of: input)) == Array("{\"a\":1}\n\n{\"b\":2}".utf8))
    }
}
