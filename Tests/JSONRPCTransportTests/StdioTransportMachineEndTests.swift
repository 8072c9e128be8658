import JSONRPC
import JSONRPCTransport
import Testing

/// How a session ends: end of input, `exit`, a hang-up while the output is full, a closed output; and
/// the drain deadline, with time moved by the test.
@Suite struct StdioTransportMachineEndTests {
    @Test func endOfInputDispatchesTheLastLineThenExitsOnceEverythingIsAnsweredAndWritten() {
        var session = MachineSession()
        _ = session.run()
        session.receive("ping\nslo")
        _ = session.run()
        session.receive("w")
        #expect(session.run() == [.wait(Wait(readInput: true))])
        session.now = .seconds(1)
        session.handle(.inputEnded)
        // A last line without its newline is a message. The request runs on; the output is written.
        #expect(session.run() == [
            message("slow"), .runMainQueue, .wait(Wait(readInput: false, deadline: .seconds(6))),
        ])
        session.status.requestsInFlight = 0
        session.status.pendingOutputBytes = 10
        #expect(session.run() == [.writeOutput, .exit(code: 0, reason: .finished)])
        #expect(session.dispatched == ["ping", "slow"])
    }

    @Test func heldOutputIsNeitherWrittenNorWaitedForButTheSessionEndsOnlyOnceItIsWritten() {
        var session = MachineSession()
        _ = session.run()
        session.receive("ping\n")
        session.handle(.inputEnded)
        // 10 bytes held for the outbox's barrier (a commit's sync): the answer is written, they are not, and
        // the wait does not ask for room to write them; the session does not end with them pending.
        session.status.pendingOutputBytes = 10
        session.status.heldOutputBytes = 10
        #expect(session.run() == [message("ping"), .runMainQueue, .writeOutput, .wait(Wait(readInput: false, deadline: .seconds(5)))])
        #expect(session.status.pendingOutputBytes == 10)
        #expect(session.run() == [.wait(Wait(readInput: false, deadline: .seconds(5)))])
        // Let go (the driver passed the barrier): written, and only then the end.
        session.status.heldOutputBytes = 0
        #expect(session.run() == [.writeOutput, .exit(code: 0, reason: .finished)])
    }

    @Test func endOfInputInsideAFrameIsAnsweredWithAFramingError() {
        var configuration = Machine.Configuration.small
        configuration.framing = .lsp
        var session = MachineSession(configuration)
        _ = session.run()
        session.receive("Content-Length: 10\r\n\r\n{\"a\"")
        #expect(session.run() == [.wait(Wait(readInput: true))])
        session.handle(.inputEnded)
        #expect(session.run() == [
            .dispatch(.error(.truncated(received: 4, expected: 10)), framing: .contentLength), .runMainQueue,
            .writeOutput, .exit(code: 0, reason: .finished),
        ])
    }

    @Test func endOfInputWaitsForRequestsInFlightUntilTheDrainTimeout() {
        var session = MachineSession()
        _ = session.run()
        session.receive("slow\n")
        _ = session.run()
        session.now = .seconds(1)
        session.handle(.inputEnded)
        #expect(session.run() == [.wait(Wait(readInput: false, deadline: .seconds(6)))])
        session.now = .seconds(6) - .milliseconds(1)
        #expect(session.run() == [.wait(Wait(readInput: false, deadline: .seconds(6)))])
        session.now = .seconds(6)
        #expect(session.run() == [.exit(code: 0, reason: .drainTimedOut)])
    }

    @Test func exitStopsReadingThenDrainsAndExitsWithTheConnectionsCode() {
        var session = MachineSession()
        session.outputRoom = 0
        _ = session.run()
        session.receive("ping\nexit\n")
        #expect(session.run() == [
            message("ping"), message("exit"), .runMainQueue, .writeOutput,
            .wait(Wait(readInput: false, writeOutput: true, deadline: .seconds(5))),
        ])
        // Input is no longer read, nor taken if it comes.
        session.receive("ping\n")
        session.now = .seconds(2)
        session.outputRoom = .max
        #expect(session.run() == [.writeOutput, .exit(code: 1, reason: .finished)])
        #expect(session.dispatched == ["ping", "exit"])
    }

    @Test func exitGivesUpOnOutputNobodyReadsAfterTheDrainTimeout() {
        var session = MachineSession()
        session.outputRoom = 0
        _ = session.run()
        session.now = .seconds(10)
        session.receive("ping\nexit\n")
        _ = session.run()
        session.now = .seconds(15) - .milliseconds(1)
        #expect(session.run() == [.writeOutput, .wait(Wait(readInput: false, writeOutput: true, deadline: .seconds(15)))])
        session.now = .seconds(15)
        #expect(session.run() == [.writeOutput, .exit(code: 1, reason: .drainTimedOut)])
    }

    @Test func aHangUpIsWatchedForOnlyWhileTheOutputIsFull() {
        var session = MachineSession()
        session.outputRoom = 0
        session.answerBytes = 99
        _ = session.run()
        session.receive("ping\n")
        #expect(session.run().last == .wait(Wait(readInput: true, writeOutput: true)))
        session.receive("ping\n")
        #expect(session.run().last == .wait(Wait(readInput: false, watchInputHangUp: true, writeOutput: true)))
        // Requests in flight at their limit, with the output not full: the input is simply not read.
        var busy = MachineSession()
        _ = busy.run()
        busy.receive("slow\nslow\n")
        #expect(busy.run().last == .wait(Wait(readInput: false)))
    }

    @Test func aHangUpWhileTheOutputIsFullGivesTheClientTheDrainTimeoutToRead() {
        var session = MachineSession()
        session.outputRoom = 0
        session.answerBytes = 100
        _ = session.run()
        session.receive("ping\nping\n")
        _ = session.run()
        session.now = .seconds(1)
        session.handle(.inputHungUp)
        let waiting = Machine.Action.wait(Wait(readInput: false, writeOutput: true, deadline: .seconds(6)))
        #expect(session.run() == [.writeOutput, waiting])
        session.now = .seconds(5)
        #expect(session.run() == [.writeOutput, waiting])
        session.now = .seconds(6)
        #expect(session.run() == [.writeOutput, .exit(code: 0, reason: .clientHungUp)])
        #expect(session.dispatched == ["ping"])
    }

    @Test func aClientThatReadsAgainAfterHangingUpIsReadToItsEnd() {
        var session = MachineSession()
        session.outputRoom = 0
        session.answerBytes = 100
        _ = session.run()
        session.receive("ping\nping\n")
        _ = session.run()
        session.now = .seconds(1)
        session.handle(.inputHungUp)
        _ = session.run()
        session.now = .seconds(2)
        session.outputRoom = .max
        #expect(session.run() == [.writeOutput, message("ping"), .runMainQueue, .writeOutput, .wait(Wait(readInput: true))])
        session.now = .seconds(7)
        session.handle(.inputEnded)
        #expect(session.run() == [.exit(code: 0, reason: .finished)])
    }

    @Test func aClosedOutputEndsTheSessionAtOnce() {
        var session = MachineSession()
        _ = session.run()
        session.outputClosed = true
        session.receive("slow\nping\nping\n")
        #expect(session.run() == [
            message("slow"), message("ping"), message("ping"), .runMainQueue, .writeOutput,
            .exit(code: 0, reason: .outputClosed),
        ])
    }
}
