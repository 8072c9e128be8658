import JSONRPC
import JSONRPCTransport
import Testing

typealias Machine = StdioTransportMachine
typealias Wait = StdioTransportMachine.Wait

extension StdioTransportMachine.Configuration {
    /// Newline-delimited, 100 bytes of pending output and 2 requests in flight at most, 5 s to drain.
    static var small: Self {
        var configuration = Self()
        configuration.framing = .ndjson
        configuration.maxPendingOutputBytes = 100
        configuration.maxInFlightRequests = 2
        configuration.drainTimeout = .seconds(5)
        return configuration
    }
}

/// The action that dispatches the message `text`.
func message(_ text: String, framing: Framing? = .newlineDelimited) -> Machine.Action {
    .dispatch(.message(ArraySlice(text.utf8)), framing: framing)
}

/// A machine driven as `StdioTransport` drives it, with a pretend connection and client in place of the
/// real ones, and a clock that moves only when the test sets ``now``.
///
/// The pretend connection: each message dispatched queues ``answerBytes`` of output, except `slow`, which
/// starts a request that stays in flight until the test ends it, and `exit`, which sets exit code 1. The
/// pretend client takes at most ``outputRoom`` bytes per write, or closes its end (``outputClosed``).
struct MachineSession {
    var machine: Machine
    var status = Machine.Status()
    var now: Duration = .zero
    var answerBytes = 10
    var outputRoom = Int.max
    var outputClosed = false
    /// The messages dispatched (framing errors as `error: ...`), in order.
    var dispatched: [String] = []
    /// Dispatches made while the limits said there was no room.
    var dispatchesWithoutRoom = 0

    init(_ configuration: Machine.Configuration = .small) {
        machine = Machine(configuration: configuration)
    }

    /// Reports input bytes.
    mutating func receive(_ text: String) {
        machine.handle(.inputReceived(ArraySlice(text.utf8)), now: now)
    }

    /// Reports an event.
    mutating func handle(_ event: Machine.Event) {
        machine.handle(event, now: now)
    }

    /// Performs the machine's actions until it waits or exits, and returns them.
    mutating func run(sourceLocation: SourceLocation = #_sourceLocation) -> [Machine.Action] {
        var actions: [Machine.Action] = []
        while actions.count < 10_000 {
            let action = machine.nextAction(status, now: now)
            actions.append(action)
            switch action {
            case .dispatch(let frame, _):
                perform(frame)
            case .runMainQueue:
                break
            case .writeOutput:
                if outputClosed {
                    machine.handle(.outputClosed, now: now)
                } else {
                    status.pendingOutputBytes -= min(outputRoom, status.writableOutputBytes)
                }
            case .wait, .exit:
                return actions
            }
        }
        Issue.record("the machine neither waits nor exits", sourceLocation: sourceLocation)
        return actions
    }

    private mutating func perform(_ frame: FrameDecoder.Event) {
        let configuration = machine.configuration
        if status.pendingOutputBytes >= configuration.maxPendingOutputBytes
            || status.requestsInFlight >= configuration.maxInFlightRequests {
            dispatchesWithoutRoom += 1
        }
        switch frame {
        case .message(let body):
            let text = String(decoding: body, as: UTF8.self)
            dispatched.append(text)
            switch text {
            case "slow": status.requestsInFlight += 1
            case "exit": status.exitCode = 1
            default: status.pendingOutputBytes += answerBytes
            }
        case .error(let error):
            dispatched.append("error: \(error)")
            status.pendingOutputBytes += answerBytes
        }
    }
}
