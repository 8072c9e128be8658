import CMainQueue

/// Work for the main thread, in one order with ``MainQueueTaskExecutor``'s jobs: while a ``StdioTransport``
/// runs, in the queue its loop runs between polls (no system call per job); otherwise on the main dispatch
/// queue.
///
/// ```swift
/// // The group commit: each group's transaction behind the jobs already queued on the main thread.
/// let database = try ShopDatabase(path: path, commits: .inline { job in MainQueue.async(job) })
/// ```
public enum MainQueue {
    /// Queues `work` to run on the main thread after the jobs already queued. Any thread.
    public static func async(_ work: @escaping @Sendable () -> Void) {
        cmq_async_main(Unmanaged.passRetained(Work(work)).toOpaque(), runWork)
    }

    /// A closure, boxed to travel as a job's context.
    private final class Work {
        let run: @Sendable () -> Void

        init(_ run: @escaping @Sendable () -> Void) {
            self.run = run
        }
    }

    /// Runs and releases a job queued by ``async(_:)``.
    private static let runWork: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
        guard let context else { return }
        Unmanaged<Work>.fromOpaque(context).takeRetainedValue().run()
    }
}
