import Dispatch
@testable import ShopStore
import Testing

/// Password hashing leaves whatever executor the calling task prefers: the server's tasks prefer the main
/// queue's (`MainQueueTaskExecutor`), where a hash would stop every other request for its duration.
@Suite struct HashingGateTests {
    /// Runs jobs on a queue of its own, which is tagged, so that work can tell whether it runs there.
    final class TaggedQueueExecutor: TaskExecutor {
        let queue = DispatchQueue(label: "hashing-gate-tests")
        let key = DispatchSpecificKey<Int>()

        init() { queue.setSpecific(key: key, value: 1) }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            queue.async { job.runSynchronously(on: executor) }
        }

        var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == 1 }
    }

    @Test func workRunsOffTheCallersPreferredExecutor() async {
        let executor = TaggedQueueExecutor()
        let gate = HashingGate(limit: 1)
        let (callerOnIt, workOnIt) = await Task(executorPreference: executor) { () -> (Bool, Bool) in
            let caller = executor.isCurrent
            let work = await gate.run { executor.isCurrent }
            return (caller, work)
        }.value
        #expect(callerOnIt)  // the preference holds for the caller…
        #expect(!workOnIt)  // …and not for the hash
    }
}
