import Foundation
import Testing
@testable import JSONRPCTransport

extension MainThreadJobTests {
    /// The sleeps of `MainLoopClock`: deadlines a running loop fires from its own list, nearest first; a
    /// cancelled sleep ends at once; outside a loop, `ContinuousClock`'s sleep. (The loop's use of the list,
    /// its `poll` timeout, is covered end to end: every debounce and the change feed's poll of a served
    /// binary sleep on it.)
    @MainActor @Suite struct MainLoopClockTests {
        @Test func dueDeadlinesFireAndTheNearestOfTheRestIsWhatTheLoopWaitsFor() {
            let timers = MainLoopTimers()
            timers.takeOver()
            defer { timers.giveBack() }
            let start = MainLoopTimers.monotonicNanoseconds()
            let second: Int64 = 1_000_000_000
            let (first, middle, last) = (LoopTimer(), LoopTimer(), LoopTimer())
            timers.add(last, atNanoseconds: start + 3 * second)
            timers.add(first, atNanoseconds: start + second)
            timers.add(middle, atNanoseconds: start + 2 * second)
            #expect(timers.nextDeadline == start + second)
            #expect(timers.fireDue(now: start) == 0)
            #expect(timers.fireDue(now: start + 2_500_000_000) == 2)
            #expect(first.hasFired && middle.hasFired && !last.hasFired)
            #expect(timers.nextDeadline == start + 3 * second)
            #expect(timers.fireDue(now: start + 3 * second) == 1)
            #expect(timers.nextDeadline == nil)
        }

        @Test func cancelledSleepsAreTakenOutOfTheListAsItGrowsAndWakeNobody() {
            let timers = MainLoopTimers()
            timers.takeOver()
            defer { timers.giveBack() }
            let start = MainLoopTimers.monotonicNanoseconds()
            // Sessions' expiries, an hour away, each cancelled by a sign-out.
            for _ in 0..<1_000 {
                let timer = LoopTimer()
                timers.add(timer, atNanoseconds: start + 3_600_000_000_000)
                timer.fire(CancellationError())
            }
            #expect(timers.count <= 64)
            let waiting = LoopTimer()
            timers.add(waiting, atNanoseconds: start + 7_200_000_000_000)
            #expect(timers.nextDeadline == start + 7_200_000_000_000)  // not a cancelled one's, an hour earlier
            #expect(timers.count == 1)
        }

        @Test func aDeadlineOnTheContinuousClockIsTheSameTimeOnTheMonotonicOne() {
            let timers = MainLoopTimers()
            timers.takeOver()
            defer { timers.giveBack() }
            let before = MainLoopTimers.monotonicNanoseconds()
            timers.add(LoopTimer(), at: ContinuousClock.now + .seconds(10))
            let after = MainLoopTimers.monotonicNanoseconds()
            let deadline = timers.nextDeadline ?? 0
            #expect(deadline >= before + 10_000_000_000 && deadline <= after + 10_000_000_000)
        }

        @Test func onTheLoopsListASleepEndsWhenItsDeadlineFiresOrAtOnceWhenItsTaskIsCancelled() async throws {
            let timers = MainLoopTimers.shared
            timers.takeOver()
            defer { timers.giveBack() }
            let clock = MainLoopClock()
            let start = clock.now
            let sleeper = Task { try await clock.sleep(until: start + .milliseconds(30)); return clock.now }
            let cancelled = Task { try await clock.sleep(for: .seconds(3_600)) }
            // Each sleep is added by a job of the main queue (bounded: a regression fails, not hangs).
            for _ in 0..<100_000 {
                if timers.count == 2 { break }
                await Task.yield()
            }
            #expect(timers.count == 2)
            cancelled.cancel()
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            // This test stands for the loop: it fires what is due until the first sleep ends.
            for _ in 0..<5_000 {
                if timers.fireDue() > 0 { break }
                try await ContinuousClock().sleep(for: .milliseconds(2))
            }
            let ended = try await sleeper.value
            #expect(ended >= start + .milliseconds(30))
        }

        @Test func outsideALoopASleepIsTheContinuousClocks() async throws {
            let clock = MainLoopClock()
            let start = clock.now
            try await clock.sleep(for: .milliseconds(5))
            #expect(clock.now >= start + .milliseconds(5))
            let sleep = Task { try await clock.sleep(for: .seconds(3_600)) }
            sleep.cancel()
            await #expect(throws: CancellationError.self) { try await sleep.value }
        }

        @Test func deadlinesLeftWhenTheLoopEndsStillEndTheirSleeps() async throws {
            let timers = MainLoopTimers()
            timers.takeOver()
            let timer = LoopTimer()
            try await withCheckedThrowingContinuation { continuation in
                guard timer.start(continuation) else { return }
                timers.add(timer, at: .now + .milliseconds(5))
                timers.giveBack()  // handed to libdispatch, which ends the sleep
            }
            #expect(timer.hasFired)
        }
    }
}
