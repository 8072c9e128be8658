import CSQLiteSettings

/// SQLite's process-wide settings, applied once before the first connection: no memory statistics, so that
/// SQLite's allocations take no process-wide mutex (Debian's SQLite counts every allocation under one; ~70 per
/// cart change). 2–7 % of the instructions of a cart change (issue 16, round 6).
///
/// ``ShopDatabase`` applies them before it opens a file; a program that opens SQLite connections some
/// other way first (GRDB directly, as the bench's floor does) calls ``applyOnce()`` before, so that both
/// run with the same settings.
public enum SQLiteProcessSettings {
    /// The result of the one attempt: `SQLITE_OK` (0), or the code SQLite refused them with (`SQLITE_MISUSE`
    /// when a connection was opened before; the defaults then stay, correct and slower).
    public static let result: Int32 = sqs_configure_process()

    /// Applies the settings if this is the first call in the process; later calls do nothing.
    /// - Returns: Whether they are in effect (false when SQLite was initialised before the first call).
    @discardableResult
    public static func applyOnce() -> Bool { result == 0 }
}
