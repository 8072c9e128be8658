/// When a SQLite database file's write-ahead log is synced after a commit.
public enum LogSyncing: Sendable {
    /// By the commit itself (`synchronous = FULL`): once a write returns, it is on disk.
    case atCommit
    /// When the caller asks (``WriteAheadLogSync/pass()``): once a write returns it is visible, and on disk
    /// only when ``ShopDatabase/logSync`` has reached its generation. For a caller that holds back what it tells
    /// anyone until then, as the server holds its output, and syncs before it lets it go.
    case deferred
}
