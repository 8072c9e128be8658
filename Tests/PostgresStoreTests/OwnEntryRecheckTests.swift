import Clocks
@testable import PostgresStore
import TestWaits
import Testing

/// The listener's recheck of its own entries: each checked at least the delay after its notice, one wait at a
/// time for all of them. No database: the check is a closure, the wait a `TestClock`'s.
@MainActor
struct OwnEntryRecheckTests {
    /// A check covers the entries noted before its wait began; those noted during the wait share the next one.
    /// However many entries come, one check waits at a time.
    @Test func entriesAreCheckedAtLeastTheDelayAfterTheirNoticeOneWaitAtATime() async throws {
        let clock = TestClock()
        var checked: [Int64] = []
        let recheck = OwnEntryRecheck(delay: .milliseconds(100), clock: clock) { checked.append($0) }
        recheck.note(7)
        await settle { await isSleeping(on: clock) }
        recheck.note(9)
        recheck.note(8)
        await clock.advance(by: .milliseconds(99))
        #expect(checked.isEmpty, "not before the delay")
        await clock.advance(by: .milliseconds(1))
        await settle { !checked.isEmpty }
        #expect(checked == [7], "the entries noted during the wait are not due yet")

        await settle { await isSleeping(on: clock) }
        await clock.advance(by: .milliseconds(99))
        #expect(checked == [7])
        await clock.advance(by: .milliseconds(1))
        await settle { checked.count == 2 }
        #expect(checked == [7, 9], "one check for both, through the newest")
        await clock.advance(by: .seconds(1))
        try await Task.sleep(for: .milliseconds(10))
        #expect(checked == [7, 9], "nothing noted since: no more checks")
    }

    /// An entry noted while a check runs (the feed reading the log) is not left to that check, which looked before
    /// it: it gets its own wait and check.
    @Test func anEntryNotedWhileACheckRunsIsCheckedAfterItsOwnDelay() async throws {
        let clock = TestClock()
        var checked: [Int64] = []
        var release: CheckedContinuation<Void, Never>?
        let recheck = OwnEntryRecheck(delay: .milliseconds(100), clock: clock) { through in
            checked.append(through)
            if through == 1 { await withCheckedContinuation { release = $0 } }
        }
        recheck.note(1)
        await settle { await isSleeping(on: clock) }
        await clock.advance(by: .milliseconds(100))
        await settle { release != nil }  // the first check runs, and waits
        recheck.note(2)
        await settle { await isSleeping(on: clock) }
        await clock.advance(by: .milliseconds(100))
        await settle { checked.count == 2 }
        #expect(checked == [1, 2])
        release?.resume()
        await clock.advance(by: .seconds(1))
        try await Task.sleep(for: .milliseconds(10))
        #expect(checked == [1, 2], "nothing is checked twice")
    }
}
