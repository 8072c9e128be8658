import PostgresNIO

/// A statement whose text never changes, run as a prepared statement: postgres-nio prepares it once on each
/// connection (named after its type) and afterwards sends only its parameters. The server then parses it once
/// and, after a few runs, plans it once (a generic plan), where an unnamed statement is parsed and planned at
/// every run: for the statements on every write's path and the change feed's reads, planning was most of
/// what they cost the server.
///
/// Each names itself (``name``): unique, and at most 63 bytes, PostgreSQL's limit for a name (longer ones are cut,
/// and two cut alike collide: postgres-nio's default, the type's full name, is longer for a nested private type).
///
/// ```swift
/// struct CartRevision: PostgresPreparedQuery {
///     static let name = "storefront_cart_revision"
///     static let sql = "SELECT revision FROM cart_revision WHERE owner = $1"
///     let owner: String
///     func makeBindings() throws -> PostgresBindings { try .values(owner) }
/// }
/// let revision = try await session.value(CartRevision(owner: owner), as: Int64.self)
/// ```
protocol PostgresPreparedQuery: PostgresPreparedStatement where Row == PostgresRow {}

extension PostgresPreparedQuery {
    /// The row as it is: decoded by the caller.
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

extension PostgresBindings {
    /// Bindings of `values`, `$1` first.
    static func values(_ values: any PostgresThrowingDynamicTypeEncodable...) throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { try bindings.append(value) }
        return bindings
    }
}

extension PostgresSession {
    /// Every row of the prepared `statement`.
    func rows<Statement: PostgresPreparedQuery>(_ statement: Statement) async throws -> [PostgresRow] {
        var rows: [PostgresRow] = []
        for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
        return rows
    }

    /// The first row of the prepared `statement`, if any.
    func first<Statement: PostgresPreparedQuery>(_ statement: Statement) async throws -> PostgresRow? {
        try await rows(statement).first
    }

    /// The first column of the first row of the prepared `statement`, if any.
    func value<Statement: PostgresPreparedQuery, T: PostgresDecodable>(_ statement: Statement, as type: T.Type = T.self) async throws -> T? {
        try await first(statement)?.decode(T.self)
    }
}
