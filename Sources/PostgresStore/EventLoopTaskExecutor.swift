import NIOCore

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
/// try await withTaskExecutorPreference(EventLoopTaskExecutor(connection.eventLoop)) {
///     try await PostgresShopDatabase.onConnectionLoop(body, session)
/// }
/// ```
final class EventLoopTaskExecutor: TaskExecutor {
    private let loop: any EventLoop

    /// An executor of `loop`'s thread.
    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    /// Runs `job` on the loop, after what the loop already has to do (at once, in this turn, when called
    /// on the loop).
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
