import NIOCore
import Shop

/// Runs a task's jobs on one NIO event loop: the loop of the connection the task's statements go through.
///
/// A statement's answer arrives on its connection's event loop. A task that waits for it elsewhere (on the
/// main thread, where an action starts) is woken by that loop: one wake-up of another thread for every
/// statement sent and one for every answer. A transaction of five statements woke threads ten times, each
/// costing more than the statement on this machine's cores. Run on the loop itself, the task sends each
/// statement from the loop and goes on when the answer is read, in the same turn of the loop; the thread it
/// came from is woken once, when the whole operation has an answer.
///
/// ```swift
/// try await withTaskExecutorPreference(EventLoopTaskExecutor.of(connection.eventLoop)) {
///     try await PostgresShopDatabase.onConnectionLoop(body, session)
/// }
/// ```
///
/// One executor per loop (``of(_:)``): the runtime tells executors apart by identity, so a task already on
/// its loop's executor enters a preference for the same one without a hop. The loop's group must outlive every
/// task that prefers it: a job given to a loop that has shut down is dropped (NIO logs it), and its task would
/// never resume. The store's loops are postgres-nio's default group, the process-wide singleton, which never
/// shuts down.
final class EventLoopTaskExecutor: TaskExecutor {
    private let loop: any EventLoop
    /// The executors made so far, by loop (as many as the group has loops).
    private static let made = Locked<[ObjectIdentifier: EventLoopTaskExecutor]>([:])

    private init(_ loop: any EventLoop) {
        self.loop = loop
    }

    /// The executor of `loop`'s thread.
    static func of(_ loop: any EventLoop) -> EventLoopTaskExecutor {
        made.withLock { made in
            if let executor = made[ObjectIdentifier(loop)] { return executor }
            let executor = EventLoopTaskExecutor(loop)
            made[ObjectIdentifier(loop)] = executor
            return executor
        }
    }

    /// Runs `job` on the loop, after what the loop already has to do (in this turn of the loop when called on
    /// it).
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
