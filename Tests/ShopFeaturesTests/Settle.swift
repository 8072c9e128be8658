import Clocks
import Testing

/// Lets other tasks run until `condition` holds. Records an issue if it never holds: only once both 2 000
/// scheduler turns and 30 seconds are spent, since the service doubles run on other threads and a loaded
/// machine may give them few turns (the limit decides nothing on a healthy run; no test sleeps).
@MainActor
func settle(
    until condition: @MainActor () -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .seconds(30))
    var turns = 0
    while turns < 2_000 || clock.now < deadline {
        if condition() { return }
        await Task.detached(priority: .low) { await Task.yield() }.value
        turns += 1
    }
    Issue.record("The expected state was never reached", sourceLocation: sourceLocation)
}

/// Lets other tasks run until someone sleeps on `clock`.
@MainActor
func settleUntilSleeping(_ clock: TestClock<Duration>, sourceLocation: SourceLocation = #_sourceLocation) async {
    let wallClock = ContinuousClock()
    let deadline = wallClock.now.advanced(by: .seconds(30))
    var turns = 0
    while turns < 500 || wallClock.now < deadline {
        do { try await clock.checkSuspension() } catch { return }
        turns += 1
    }
    Issue.record("Nothing ever slept on the clock", sourceLocation: sourceLocation)
}
