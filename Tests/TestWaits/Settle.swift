import Clocks
import Testing

/// Lets other tasks run until `condition` holds, on the caller's actor. Records an issue if it never holds, but
/// only once both 2 000 turns of the global executor and 30 seconds are spent: a turn counts only when a task of
/// the global pool actually ran, so a pool held by other tests' blocking work (two threads on a two-core machine)
/// stretches the wait instead of failing it. The limit decides nothing on a healthy run; it guards against a hang.
nonisolated(nonsending) public func settle(
    until condition: () async throws -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async rethrows {
    let wallClock = ContinuousClock()
    let deadline = wallClock.now.advanced(by: .seconds(30))
    var turns = 0
    while turns < 2_000 || wallClock.now < deadline {
        if try await condition() { return }
        await Task.detached(priority: .low) { await Task.yield() }.value
        turns += 1
    }
    if try await condition() { return }
    Issue.record("The expected state was never reached", sourceLocation: sourceLocation)
}

/// Lets other tasks run until something sleeps on `clock`, with the same guard as ``settle(until:sourceLocation:)``.
nonisolated(nonsending) public func settleUntilSleeping(
    _ clock: TestClock<Duration>,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    await settle(until: { await isSleeping(on: clock) }, sourceLocation: sourceLocation)
}

/// Whether something sleeps on `clock` (its `checkSuspension` throws exactly when a sleep is pending).
public func isSleeping(on clock: TestClock<Duration>) async -> Bool {
    (try? await clock.checkSuspension()) == nil
}
