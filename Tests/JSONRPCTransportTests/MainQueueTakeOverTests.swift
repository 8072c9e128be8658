import CMainQueue
import Dispatch
import Foundation
import JSONRPCTransport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension MainThreadJobTests {
    /// The queue a stdio loop takes over from the main dispatch queue (`CMainQueue`): jobs run in the order
    /// they were queued, a round runs only the jobs queued when it starts, a job queued while the loop sleeps
    /// wakes it through the descriptor (and only then), and jobs left when the loop ends go to the main
    /// dispatch queue. Each test takes the queue over and gives it back before it suspends, so main-queue
    /// jobs of other tests are never left without a runner.
    @MainActor @Suite struct MainQueueTakeOverTests {
        /// What the jobs did, in order.
        final class Log: Sendable {
            private let entries = Mutex<[String]>([])
            func add(_ entry: String) { entries.withLock { $0.append(entry) } }
            var all: [String] { entries.withLock { $0 } }
        }

        @Test func aRoundRunsTheJobsQueuedWhenItStartsInTheirOrder() {
            let descriptor = cmq_take_over_jobs()
            defer { cmq_give_back_jobs() }
            #expect(descriptor >= 0)
            let log = Log()
            MainQueue.async {
                log.add("a")
                MainQueue.async { log.add("c") }  // queued by a job: the next round's
            }
            MainQueue.async { log.add("b") }
            #expect(cmq_jobs_queued())
            #expect(cmq_run_jobs())  // "c" is left
            #expect(log.all == ["a", "b"])
            #expect(!cmq_run_jobs())
            #expect(log.all == ["a", "b", "c"])
            #expect(!cmq_jobs_queued())
        }

        @Test func onlyAJobQueuedWhileTheLoopSleepsMakesTheDescriptorReadable() {
            let descriptor = cmq_take_over_jobs()
            defer { cmq_give_back_jobs() }
            let log = Log()
            // Awake (not between `cmq_will_sleep` and `cmq_woke`): a job from another thread writes nothing.
            Self.onAnotherThread { MainQueue.async { log.add("awake") } }
            #expect(!Self.isReadable(descriptor, waitingMilliseconds: 0))
            #expect(!cmq_will_sleep())  // a job is queued: the loop must not block
            cmq_woke(false)
            #expect(!cmq_run_jobs())
            // Asleep: the first job queued from another thread wakes the loop; a second writes nothing more.
            #expect(cmq_will_sleep())
            Self.onAnotherThread {
                MainQueue.async { log.add("asleep 1") }
                MainQueue.async { log.add("asleep 2") }
            }
            #expect(Self.isReadable(descriptor, waitingMilliseconds: 10_000))
            cmq_woke(true)
            #expect(!Self.isReadable(descriptor, waitingMilliseconds: 0))  // the read cleared it
            #expect(!cmq_run_jobs())
            #expect(log.all == ["awake", "asleep 1", "asleep 2"])
        }

        @Test func jobsLeftWhenTheLoopEndsRunOnTheMainDispatchQueueInOrder() async {
            let log = Log()
            _ = cmq_take_over_jobs()
            MainQueue.async { log.add("queued 1") }
            MainQueue.async { log.add("queued 2") }
            cmq_give_back_jobs()
            #expect(!cmq_jobs_queued())
            MainQueue.async { log.add("after") }  // straight to the main dispatch queue
            await withCheckedContinuation { continuation in MainQueue.async { continuation.resume() } }
            #expect(log.all == ["queued 1", "queued 2", "after"])
        }

        /// Runs `work` on a thread of its own and waits for it (`DispatchQueue.sync` would run it on this one).
        static func onAnotherThread(_ work: @escaping @Sendable () -> Void) {
            let done = DispatchSemaphore(value: 0)
            let caller = pthread_self()
            let thread = Thread {
                precondition(pthread_equal(pthread_self(), caller) == 0)
                work()
                done.signal()
            }
            thread.start()
            done.wait()
        }

        /// Whether `descriptor` is readable within `waitingMilliseconds`.
        static func isReadable(_ descriptor: Int32, waitingMilliseconds: Int32) -> Bool {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, waitingMilliseconds) == 1 && entry.revents & Int16(POLLIN) != 0
        }
    }
}
