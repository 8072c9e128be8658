import Foundation
import GRDB
import GRDBSQLite

/// The change feed's poll of a database file: the number of the last change-log entry, read on a connection
/// of its own with one statement compiled once.
///
/// The poll runs 50 times a second for the server's whole life, idle or not. Through GRDB's reader pool each
/// read cost ~80k instructions (taking a reader from the pool, its serial queue, the isolation of the read)
/// around a few thousand of SQLite's; here it is SQLite's work and little else: one short read transaction
/// (the statement's own, in autocommit mode), which sees only committed data as any reader does.
///
/// A failed read (the file locked by a recovery or a truncating checkpoint, say) throws, and the feed's next
/// poll reads again; after any other failure the connection is opened again first. Safe from any thread:
/// each read holds a lock. The connection closes when the probe is released (with its feed).
final class ChangeLogProbe: @unchecked Sendable {
    /// How long a read waits for a lock another connection holds (a recovery, a checkpoint that truncates the
    /// log) before failing: not at all, as it runs on the main thread and the next poll reads again.
    static let busyTimeout: Int32 = 0  // milliseconds

    private let path: String
    private let lock = NSLock()
    /// Opened at the first read; nil until then, or after a read found the connection broken.
    private var connection: OpaquePointer?
    private var statement: OpaquePointer?

    /// A probe of the database file at `path` (a file SQLite can open; never `":memory:"`, whose connection
    /// is private to its opener).
    init(path: String) {
        self.path = path
    }

    deinit {
        close()
    }

    /// The number of the last entry ever written to the change log (0 before the first).
    /// - Throws: A `DatabaseError` when the file cannot be opened or read (after anything but a lock held too
    ///   long, it is opened again at the next read).
    func lastSeq() throws -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        let statement = try preparedStatement()
        let code = sqlite3_step(statement)
        let last = code == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : 0
        // Ends the statement's read transaction (before any close below, which finalizes it).
        sqlite3_reset(statement)
        guard code == SQLITE_ROW || code == SQLITE_DONE else {
            let error = DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)))
            // A lock held by another connection is a passing state; anything else, open again next time.
            if code & 0xff != SQLITE_BUSY { close() }
            throw error
        }
        return last
    }

    /// The compiled statement, opening the connection first when needed.
    private func preparedStatement() throws -> OpaquePointer {
        if let statement { return statement }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
        let opened = sqlite3_open_v2(path, &handle, flags, nil)
        guard opened == SQLITE_OK, let handle else {
            let error = DatabaseError(
                resultCode: ResultCode(rawValue: opened), message: handle.map { String(cString: sqlite3_errmsg($0)) })
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_busy_timeout(handle, Self.busyTimeout)
        var compiled: OpaquePointer?
        let prepared = sqlite3_prepare_v3(handle, ChangeLog.lastSeqSQL, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &compiled, nil)
        guard prepared == SQLITE_OK, let compiled else {
            let error = DatabaseError(resultCode: ResultCode(rawValue: prepared), message: String(cString: sqlite3_errmsg(handle)))
            sqlite3_close_v2(handle)
            throw error
        }
        connection = handle
        statement = compiled
        return compiled
    }

    private func close() {
        sqlite3_finalize(statement)
        sqlite3_close_v2(connection)
        statement = nil
        connection = nil
    }
}
