import Clocks
import Testing

/// Lets other tasks run until `condition` holds (a bounded number of scheduler turns; no sleeping,
/// no wall-clock time). Records an issue if it never holds.
@MainActor
func settle(
    until condition: @MainActor () -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    for _ in 0..<2_000 {
        if condition() { return }
        await Task.detached(priority: .low) { await Task.yield() }.value
    }
    Issue.record("The expected state was never reached", sourceLocation: sourceLocation)
}

/// Lets other tasks run until someone sleeps on `clock`.
@MainActor
func settleUntilSleeping(_ clock: TestClock<Duration>, sourceLocation: SourceLocation = #_sourceLocation) async {
    for _ in 0..<500 {
        do { try await clock.checkSuspension() } catch { return }
    }
    Issue.record("Nothing ever slept on the clock", sourceLocation: sourceLocation)
}
