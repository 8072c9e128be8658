import Clocks
import Testing

/// Whether something sleeps on `clock` (its `checkSuspension` throws exactly when a sleep is pending).
@MainActor
func isSleeping(on clock: TestClock<Duration>) async -> Bool {
    (try? await clock.checkSuspension()) == nil
}

/// Waits until `condition` holds, polling; records an issue after 30 s (a guard against a hang, not a measure).
@MainActor
func waitUntil(_ condition: () async -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now.advanced(by: .seconds(30))
    while ContinuousClock.now < deadline {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(2))
    }
    Issue.record("The expected state was never reached", sourceLocation: sourceLocation)
}
