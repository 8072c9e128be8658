import CSQLiteRowSets
import GRDB
import GRDBSQLite

/// A statement of a hot path (cart changes, checkouts and what they write: notifications, price points) run
/// straight on SQLite: its arguments bound and its columns read in place, without GRDB's argument values,
/// rows and cursors, which cost more than SQLite's own work on these one-row statements (callgrind, per cart
/// change: GRDB's bindings ~56k instructions, its rows ~59k, against ~80k for every `sqlite3_step` of the
/// change; BENCHMARKS.md).
///
/// The statement is compiled once per connection (GRDB's statement cache; a ``StatementSQL`` also skips the
/// look-up of the text there). Each SQL text given here must be run only through this type: GRDB, which binds
/// arguments itself, never sees the bindings made here.
///
/// ```swift
/// let revision = try DirectStatement(db, "SELECT revision FROM cart_revision WHERE owner = ?")
///     .one([.text(owner)]) { $0.int64(0) } ?? 0
/// ```
struct DirectStatement {
    /// A value bound to a parameter.
    enum Argument {
        case integer(Int64)
        case text(String)
        case null
        /// A set of rowids for the functions of `CSQLiteRowSets` (``SeqSet``); it must outlive the statement's
        /// run (the bindings are cleared after it).
        case rowSet(UnsafeMutablePointer<srs_row_set>)
    }

    /// A row being read: valid only inside the closure it is passed to.
    struct Row {
        fileprivate let handle: OpaquePointer

        /// The integer in `column` (0-based); 0 for NULL.
        func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
        /// The integer in `column` (0-based); 0 for NULL.
        func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
        /// Whether `column` (0-based) is NULL.
        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
        /// The text in `column` (0-based); empty for NULL.
        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(handle, column) else { return "" }
            return String(cString: bytes)
        }
    }

    private let statement: Statement

    /// The cached statement for `sql` on `db`'s connection (compiled on first use).
    /// - Throws: A `DatabaseError` when the SQL does not compile.
    init(_ db: Database, _ sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
    }

    /// The statement for `sql` on `db`'s connection, without looking its text up in GRDB's cache when `sql`
    /// kept it (``StatementSQL``: the statements of hot paths).
    /// - Throws: A `DatabaseError` when the SQL does not compile.
    init(_ db: Database, _ sql: StatementSQL) throws {
        statement = try sql.statement(in: db)
    }

    /// Runs the statement to its end (an insert, update or delete).
    /// - Throws: A `DatabaseError` when SQLite refuses it (a constraint, say).
    func execute(_ arguments: [Argument]) throws {
        try forEachRow(arguments) { _ in false }
    }

    /// The first row's value read by `read`, or nil when the statement gives no row.
    /// - Throws: A `DatabaseError` when SQLite fails.
    func one<T>(_ arguments: [Argument], _ read: (Row) throws -> T) throws -> T? {
        var value: T?
        try forEachRow(arguments) { row in
            value = try read(row)
            return false
        }
        return value
    }

    /// Binds `arguments`, calls `body` with each row while it returns true, and resets the statement.
    /// - Throws: A `DatabaseError` when SQLite fails, or what `body` throws.
    func forEachRow(_ arguments: [Argument], while body: (Row) throws -> Bool) throws {
        let handle = statement.sqliteStatement
        // The texts' bytes are bound from one scratch buffer on the stack (`SQLITE_STATIC`), which outlives the
        // bindings: SQLite does not copy them into memory of its own, a `malloc` and a `free` per text (SQLite's
        // lookaside allocator is left out of Debian's build).
        var textBytes = 0
        for case .text(let value) in arguments { textBytes += value.utf8.count }
        try withUnsafeTemporaryAllocation(of: CChar.self, capacity: max(1, textBytes)) { scratch in
            defer {
                sqlite3_reset(handle)
                sqlite3_clear_bindings(handle)
            }
            // Never null, so that an empty text binds empty text, not NULL.
            guard let base = scratch.baseAddress else { return }
            var used = 0
            for (index, argument) in zip(Int32(1)..., arguments) {
                let code: Int32
                switch argument {
                case .integer(let value): code = sqlite3_bind_int64(handle, index, value)
                case .text(var value):
                    let start = base + used
                    let count = value.withUTF8 { bytes in
                        if let source = bytes.baseAddress { UnsafeMutableRawPointer(start).copyMemory(from: source, byteCount: bytes.count) }
                        return bytes.count
                    }
                    used += count
                    // No destructor (`SQLITE_STATIC`): the bytes stay where they are until the bindings are cleared.
                    code = sqlite3_bind_text(handle, index, start, Int32(count), nil)
                case .null: code = sqlite3_bind_null(handle, index)
                case .rowSet(let set): code = srs_bind_row_set(handle, index, set)
                }
                guard code == SQLITE_OK else { throw error(code) }
            }
            while true {
                let code = sqlite3_step(handle)
                if code == SQLITE_DONE { return }
                guard code == SQLITE_ROW else { throw error(code) }
                guard try body(Row(handle: handle)) else { return }
            }
        }
    }

    /// The error SQLite reported for `code`.
    private func error(_ code: Int32) -> DatabaseError {
        let handle = statement.sqliteStatement
        return DatabaseError(
            resultCode: ResultCode(rawValue: sqlite3_extended_errcode(sqlite3_db_handle(handle))),
            message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))), sql: statement.sql)
    }
}

