import PostgresNIO

/// One statement put together from parts written by different owners (a service's changes, the change log's
/// append, the idempotency record), each binding its own values: ``bind(_:)`` adds a parameter and gives the
/// placeholder to write in its place, so the parts never need to know each other's numbering.
///
/// It serves the writes that send a transaction's changes in one round trip, as data-modifying `WITH`
/// queries (``ctes``) of one statement: what was several round trips to the server, each a wait, becomes one.
///
/// ```swift
/// var statement = PostgresStatement()
/// statement.with("emptied AS (DELETE FROM cart_line WHERE owner = \(statement.bind(owner)))")
/// let seqs = try await PostgresChangeLog.append(session, [(.cart, owner)], at: now, after: statement)
/// ```
struct PostgresStatement {
    /// The values bound so far, `$1` first.
    private(set) var binds = PostgresBindings()
    /// The `WITH` queries so far (`name AS (…)`), in order; their names must differ.
    private(set) var ctes: [String] = []

    /// Binds `value` as the next parameter and returns its placeholder (`$n`).
    mutating func bind<Value: PostgresThrowingDynamicTypeEncodable>(_ value: Value) throws -> String {
        try binds.append(value)
        return "$\(binds.count)"
    }

    /// Binds `value` (NULL when nil) as the next parameter and returns its placeholder.
    mutating func bind<Value: PostgresThrowingDynamicTypeEncodable>(_ value: Value?) throws -> String {
        try binds.append(value)
        return "$\(binds.count)"
    }

    /// Adds a `WITH` query (`name AS (…)`), written with placeholders from ``bind(_:)``.
    mutating func with(_ cte: String) {
        ctes.append(cte)
    }

    /// The statement: the `WITH` queries so far, then `body` (a query written with this statement's
    /// placeholders).
    func query(_ body: String) -> PostgresQuery {
        PostgresQuery(unsafeSQL: ctes.isEmpty ? body : "WITH " + ctes.joined(separator: ",\n") + "\n" + body, binds: binds)
    }
}
