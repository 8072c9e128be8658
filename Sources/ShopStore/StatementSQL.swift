import GRDB
import Synchronization

/// The SQL text of a ``DirectStatement`` run on a hot path, kept with the statement compiled from it for the
/// connection that ran it last, so that running it again skips GRDB's look-up of the statement by its text.
/// That look-up hashes the whole text: ~800 instructions for a long statement, seven times per cart change
/// (callgrind, BENCHMARKS.md round 24). Declare one as a constant, next to the code that runs it:
///
/// ```swift
/// private static let revisionSQL = StatementSQL("SELECT revision FROM cart_revision WHERE owner = ?")
/// let revision = try DirectStatement(db, Self.revisionSQL).one([.text(owner)]) { $0.int64(0) } ?? 0
/// ```
///
/// The statement is held weakly: GRDB's statement cache owns it, and finalizes it when it clears the cache
/// (a schema change, memory pressure, the connection closing), after which the next run asks GRDB again.
/// A statement is used only on the connection it was compiled for: another connection running the same text
/// asks GRDB, and becomes the one kept.
final class StatementSQL: @unchecked Sendable {
    /// The statement's SQL.
    let text: String

    /// Guards ``connection`` and ``statement`` (the class is `Sendable` by it).
    private let lock = Mutex(())
    private var connection: SQLiteConnection?
    private weak var statement: Statement?

    /// The SQL `text`, compiled on first use on each connection.
    init(_ text: String) {
        self.text = text
    }

    /// The statement compiled from ``text`` for `db`'s connection: the one kept, else GRDB's cached one (which
    /// compiles it the first time).
    /// - Throws: A `DatabaseError` when the SQL does not compile.
    func statement(in db: Database) throws -> Statement {
        let connection = db.sqliteConnection
        if let statement = lock.withLock({ _ in self.connection == connection ? self.statement : nil }) { return statement }
        let statement = try db.cachedStatement(sql: text)
        lock.withLock { _ in
            self.connection = connection
            self.statement = statement
        }
        return statement
    }
}
