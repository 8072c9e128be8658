/// Where the group commit of cart changes, checkouts and guest adoptions runs its transactions.
///
/// ```swift
/// // The server: commits on the main thread, at the end of the turn that asked for them.
/// let database = try ShopDatabase(path: path, commits: .inline { job in MainQueue.async(job) })
/// ```
public enum CommitPlacement: Sendable {
    /// On the database's writer queue, a thread of its own: the caller's thread never waits for a sync,
    /// at the price of two thread hand-offs per group (there, and back to the caller).
    case writerQueue
    /// On the thread that runs `schedule`'s jobs, as a job put behind those already queued there: the writes
    /// asked for in one turn of that thread (every action one read of the input brought) share a transaction,
    /// and no thread hand-off is made. That thread waits for each sync. When another connection holds the
    /// database's write lock, the group is handed to the writer queue instead of waiting there.
    case inline(schedule: @Sendable (_ job: @escaping @Sendable () -> Void) -> Void)
}
