import CMainQueue
import Dispatch

/// A task executor whose jobs run on the main thread, as jobs of the main actor: from the queue the stdio
/// transport takes over and runs between reads while it runs (``MainQueue``), else on the main dispatch queue.
///
/// Why: a task of the main actor that suspends on a continuation (a database commit it waits for, another
/// task's value) is resumed on the global pool, which then hands it back to the main actor: two thread
/// wake-ups, each a futex and a scheduler delay on this path, for every such wait of every action. A task
/// that prefers this executor (`Task(executorPreference:)`) is resumed on the main queue itself.
///
/// What such a task runs that is not isolated to an actor runs on the main thread too: work that must not
/// (password hashing) opts out with `withTaskExecutorPreference(globalConcurrentExecutor)`.
///
/// ```swift
/// Task(executorPreference: MainQueueTaskExecutor.shared) { @MainActor in await handle(request) }
/// ```
public final class MainQueueTaskExecutor: TaskExecutor {
    /// The executor (it has no state: one serves every task).
    public static let shared = MainQueueTaskExecutor()

    private init() {}

    /// Runs `job` on the main queue, in its order, isolated to the main actor (it runs on the main thread,
    /// between the main actor's other jobs, so a switch to the main actor costs nothing).
    public func enqueue(_ job: consuming ExecutorJob) {
        // The job itself is the context (`dispatch_async_f`): no closure or block is allocated per job. An
        // unowned job is the job's address (checked, as the layout is not documented).
        precondition(MemoryLayout<UnownedJob>.size == MemoryLayout<UnsafeMutableRawPointer>.size)
        cmq_async_main(unsafeBitCast(UnownedJob(job), to: UnsafeMutableRawPointer.self), runJobOnMainQueue)
    }
}

/// Runs a job queued by ``MainQueueTaskExecutor``, on the main queue.
private func runJobOnMainQueue(_ context: UnsafeMutableRawPointer?) {
    let job = unsafeBitCast(context, to: UnownedJob.self)
    job.runSynchronously(isolatedTo: MainActor.sharedUnownedExecutor, taskExecutor: MainQueueTaskExecutor.shared.asUnownedTaskExecutor())
}
