import Shop

/// The change-log entries this process wrote, noted when they are appended (before their commit), so that
/// the listener does not read back what the writer publishes itself: the notification of an own commit
/// often arrives before the writer has published it, and reading the log then (a snapshot and the data the
/// entry names) doubled the time a write took to answer.
///
/// A number is noted while its transaction is open; if that transaction rolls back, the number is given
/// out again, possibly to another process, whose notification would then look like one of ours. So a
/// skipped notification is checked again a little later (``PostgresChangeListener/recheckDelay``): if the
/// feed has still not published that entry, it reads the log. A mistaken skip costs that delay, never
/// the entry.
final class OwnEntries: Sendable {
    private let seqs = Locked(Set<Int64>())

    /// Notes an entry this process appended.
    func note(_ seq: Int64) {
        seqs.withLock { _ = $0.insert(seq) }
    }

    /// Whether `seq` was noted, forgetting it.
    func take(_ seq: Int64) -> Bool {
        seqs.withLock { $0.remove(seq) != nil }
    }
}
