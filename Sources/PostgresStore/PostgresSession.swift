import Logging
import PostgresNIO

/// One leased connection, inside a transaction or not: queries with their binds, rows collected.
///
/// `PostgresQuery` is written with string interpolation, each interpolated value sent as a bind parameter
/// (`"SELECT … WHERE id = \(id)"`), never spliced into the SQL.
struct PostgresSession {
    let connection: PostgresConnection
    let logger: Logger
    /// Where the change-log entries this process writes are noted (see ``OwnEntries``); nil outside a server.
    var ownEntries: OwnEntries? = nil
    /// The deadline of the operation the session serves (nil: none), checked before a COMMIT.
    var deadline: Deadline? = nil

    /// Every row of `query`.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await connection.query(query, logger: logger).collect()
    }

    /// Runs `query`, discarding its rows (if any); returns how many rows it returned.
    @discardableResult
    func execute(_ query: PostgresQuery) async throws -> Int {
        try await rows(query).count
    }

    /// The first row of `query`, if any.
    func first(_ query: PostgresQuery) async throws -> PostgresRow? {
        try await rows(query).first
    }

    /// The first column of the first row of `query`, if any.
    func value<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type = T.self) async throws -> T? {
        try await first(query)?.decode(T.self)
    }
}
