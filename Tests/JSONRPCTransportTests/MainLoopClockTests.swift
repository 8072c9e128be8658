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
            let start = ContinuousClock.now
            let (first, second, third) = (LoopTimer(), LoopTimer(), LoopTimer())
            timers.add(third, at: start + .seconds(3))
            timers.add(first, at: start + .seconds(1))
            timers.add(second, at: start + .seconds(2))
            #expect(timers.nextDeadline == start + .seconds(1))
            #expect(timers.fireDue(now: start) == 0)
            #expect(timers.fireDue(now: start + .milliseconds(2_500)) == 2)
            #expect(first.hasFired && second.hasFired && !third.hasFired)
            #expect(timers.nextDeadline == start + .seconds(3))
            #expect(timers.fireDue(now: start + .seconds(3)) == 1)
            #expect(timers.nextDeadline == nil)
        }

        @Test func cancelledSleepsAreTakenOutOfTheListAsItGrows() {
            let timers = MainLoopTimers()
            timers.takeOver()
            defer { timers.giveBack() }
            let start = ContinuousClock.now
            // Sessions' expiries, an hour away, each cancelled by a sign-out.
            for _ in 0..<1_000 {
                let timer = LoopTimer()
                timers.add(timer, at: start + .seconds(3_600))
                timer.fire(CancellationError())
            }
            #expect(timers.count <= 64)
            let waiting = LoopTimer()
            timers.add(waiting, at: start + .seconds(1))
            #expect(timers.nextDeadline == start + .seconds(1))
        }

        @Test func onTheLoopsListASleepEndsWhenItsDeadlineFiresOrAtOnceWhenItsTaskIsCancelled() async throws {
            let timers = MainLoopTimers.shared
            timers.takeOver()
            defer { timers.giveBack() }
            let clock = MainLoopClock()
            let start = clock.now
            let sleeper = Task { try await clock.sleep(until: start + .milliseconds(30)); return clock.now }
            let cancelled = Task { try await clock.sleep(for: .seconds(3_600)) }
            // Each sleep is added by a job of the main queue.
            while timers.count < 2 { await Task.yield() }
            cancelled.cancel()
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            // This test stands for the loop: it fires what is due until the first sleep ends.
            while timers.fireDue() == 0 { try await ContinuousClock().sleep(for: .milliseconds(2)) }
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
