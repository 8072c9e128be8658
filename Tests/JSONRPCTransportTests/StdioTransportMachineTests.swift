import Randomness
import JSONRPC
import JSONRPCTransport
import Testing

/// Reading, dispatch and flow control. Time does not matter here; see ``StdioTransportMachineEndTests``.
@Suite struct StdioTransportMachineTests {
    @Test func startsByWaitingForInput() {
        var session = MachineSession()
        #expect(session.run() == [.wait(Wait(readInput: true))])
    }

    @Test func dispatchesEveryMessageOfAReadThenRunsTheMainQueueAndWritesOnce() {
        var session = MachineSession()
        _ = session.run()
        session.receive("ping\nping\n\nping\npi")
        #expect(session.run() == [
            message("ping"), message("ping"), message("ping"), .runMainQueue, .writeOutput,
            .wait(Wait(readInput: true)),
        ])
        session.receive("ng\n")
        #expect(session.run() == [message("ping"), .runMainQueue, .writeOutput, .wait(Wait(readInput: true))])
    }

    @Test func aReadWithoutAWholeMessageOnlyWaitsForMore() {
        var session = MachineSession()
        _ = session.run()
        session.receive("pi")
        #expect(session.run() == [.wait(Wait(readInput: true))])
    }

    @Test func dispatchesInTheFramingTheClientSpoke() {
        var configuration = Machine.Configuration.small
        configuration.framing = .auto
        var session = MachineSession(configuration)
        _ = session.run()
        session.receive("Content-Length: 4\r\n\r\nping")
        #expect(session.run() == [
            message("ping", framing: .contentLength), .runMainQueue, .writeOutput, .wait(Wait(readInput: true)),
        ])
        var lines = MachineSession(configuration)
        lines.receive("\n [1]\n")
        #expect(lines.run().first == message("[1]", framing: .newlineDelimited))
    }

    @Test func stopsDispatchingAndReadingWhileTheOutputIsFullAndGoesOnOnceTheClientReads() {
        var session = MachineSession()
        session.answerBytes = 60
        session.outputRoom = 0
        _ = session.run()
        session.receive("ping\nping\nping\n")
        // 60 bytes pending leave room for one more message; 120 do not. The third waits in the decoder,
        // no more input is read, and the input is watched for a hang-up instead.
        #expect(session.run() == [
            message("ping"), message("ping"), .runMainQueue, .writeOutput,
            .wait(Wait(readInput: false, watchInputHangUp: true, writeOutput: true)),
        ])
        // The output has room again but nobody read it: nothing changes.
        #expect(session.run() == [.writeOutput, .wait(Wait(readInput: false, watchInputHangUp: true, writeOutput: true))])
        session.outputRoom = .max
        #expect(session.run() == [
            .writeOutput, message("ping"), .runMainQueue, .writeOutput, .wait(Wait(readInput: true)),
        ])
        #expect(session.dispatched == ["ping", "ping", "ping"])
    }

    @Test func stopsDispatchingAndReadingWhileTooManyRequestsAreInFlight() {
        var session = MachineSession()
        _ = session.run()
        session.receive("slow\nslow\nslow\nping\n")
        // Two in flight is the limit: no hang-up watch, since the output is not full.
        #expect(session.run() == [message("slow"), message("slow"), .runMainQueue, .wait(Wait(readInput: false))])
        session.status.requestsInFlight = 1
        session.status.pendingOutputBytes = 10
        #expect(session.run() == [.writeOutput, message("slow"), .runMainQueue, .wait(Wait(readInput: false))])
        session.status.requestsInFlight = 0
        #expect(session.run() == [message("ping"), .runMainQueue, .writeOutput, .wait(Wait(readInput: true))])
    }

    @Test func aWaitThatEndsWithoutInputStillWritesWhatIsPending() {
        var session = MachineSession()
        session.outputRoom = 0
        _ = session.run()
        session.receive("ping\n")
        #expect(session.run() == [message("ping"), .runMainQueue, .writeOutput, .wait(Wait(readInput: true, writeOutput: true))])
        // A task's answer, or room in the output: the wait ends with no input event.
        session.outputRoom = .max
        #expect(session.run() == [.writeOutput, .wait(Wait(readInput: true))])
        #expect(session.run() == [.wait(Wait(readInput: true))])
    }

    @Test func everyMessageIsDispatchedOnceInOrderWithinTheLimitsHoweverTheInputArrives() {
        for seed in UInt64(1)...40 {
            var random = SeededRandom(seed: seed)
            let words = (0..<60).map { _ in ["ping", "slow", "ping\r", "  "].randomElement(using: &random)! }
            let input = Array(words.map { "\($0)\n" }.joined().utf8)
            var chunks = randomChunks(of: input, maxLength: 24, using: &random)[...]
            var session = MachineSession()
            session.answerBytes = Int.random(in: 1...120, using: &random)
            var exit: Machine.Action?
            for _ in 0..<10_000 where exit == nil {
                session.outputRoom = [0, 7, 50, .max].randomElement(using: &random)!
                session.status.requestsInFlight = Int.random(in: 0...session.status.requestsInFlight, using: &random)
                guard case .wait(let wait) = session.run().last else {
                    exit = .exit(code: -1, reason: .finished)
                    break
                }
                guard wait.readInput else { continue }
                if let chunk = chunks.popFirst() {
                    session.machine.handle(.inputReceived(chunk), now: session.now)
                } else {
                    session.handle(.inputEnded)
                    session.outputRoom = .max
                    session.status.requestsInFlight = 0
                    exit = session.run().last
                }
            }
            #expect(exit == .exit(code: 0, reason: .finished), "seed \(seed)")
            #expect(session.dispatched == words.filter { $0 != "  " }.map { $0 == "ping\r" ? "ping" : $0 }, "seed \(seed)")
            #expect(session.dispatchesWithoutRoom == 0, "seed \(seed)")
        }
    }
}
