import Dispatch
import JSONRPCTransport
import Testing

/// The suites whose jobs go through `cmq_async_main` run one at a time: while one takes the main thread's
/// queue over (as a stdio loop does), the other's jobs would run from it, off the main dispatch queue.
@Suite(.serialized) enum MainThreadJobTests {}

extension MainThreadJobTests {
    /// Tasks that prefer the main-queue executor run on the main queue, and come back to it after a wait
    /// resumed from another thread (rather than by way of the global pool); work that opts out with
    /// `globalConcurrentExecutor` leaves it.
    @MainActor @Suite struct MainQueueTaskExecutorTests {
        /// Set on the main queue only: tells whether code runs on it, whatever thread services it.
        nonisolated static let mainQueueKey: DispatchSpecificKey<Int> = {
            let key = DispatchSpecificKey<Int>()
            DispatchQueue.main.setSpecific(key: key, value: 1)
            return key
        }()

        nonisolated static var isOnMainQueue: Bool { DispatchQueue.getSpecific(key: mainQueueKey) == 1 }

        @Test func aPreferringTaskRunsAndResumesOnTheMainQueue() async {
            _ = Self.mainQueueKey
            let places = await Task(executorPreference: MainQueueTaskExecutor.shared) { () -> [Bool] in
                var places = [Self.isOnMainQueue]
                // Resumed from a global thread: the task comes back on the main queue.
                await withCheckedContinuation { continuation in DispatchQueue.global().async { continuation.resume() } }
                places.append(Self.isOnMainQueue)
                places.append(await Self.nonisolatedWork())
                return places
            }.value
            #expect(places == [true, true, true])
        }

        @Test func workThatPrefersTheGlobalExecutorLeavesTheMainQueue() async {
            _ = Self.mainQueueKey
            let onMain = await Task(executorPreference: MainQueueTaskExecutor.shared) { () -> Bool in
                await withTaskExecutorPreference(globalConcurrentExecutor) { await Self.nonisolatedWork() }
            }.value
            #expect(!onMain)
        }

        /// Where nonisolated async work runs: with a task executor preference, on that executor.
        @concurrent nonisolated static func nonisolatedWork() async -> Bool {
            isOnMainQueue
        }
    }
}
