import PostgresNIO

/// One statement put together from parts written by different owners (a service's changes, the change log's
/// append, the idempotency record), each binding its own values: ``bind(_:)`` adds a parameter and gives the
/// placeholder to write in its place, so the parts never need to know each other's numbering.
///
/// It serves the writes that send a transaction's changes in one round trip, as data-modifying `WITH`
/// queries (``ctes``) of one statement: what was several round trips to the server, each a wait, becomes one.
///
/// The order of the parts matters where they wait for row locks. PostgreSQL runs a `WITH` query when the
/// statement first reads it, and the ones nothing reads after the rest: the change log's append would otherwise
/// take the log's head lock, which every write of the database waits for, and then wait for a row another
/// transaction holds. So a part that may wait is a ``change(_:_:)``: the append's update of the head reads every
/// change first (see `PostgresChangeLog.append`), and takes that lock only once they are done.
///
/// ```swift
/// var statement = PostgresStatement()
/// let owner = try statement.bind(shopper.storageKey)
/// statement.change("emptied", "DELETE FROM cart_line WHERE owner = \(owner)")
/// let seqs = try await PostgresChangeLog.append(session, [(.cart, shopper.storageKey)], at: now, after: statement)
/// ```
struct PostgresStatement {
    /// The values bound so far, `$1` first.
    private(set) var binds = PostgresBindings()
    /// The `WITH` queries so far (`name AS (…)`), in order; their names must differ.
    private(set) var ctes: [String] = []
    /// The names of the ``change(_:_:)``s, in order.
    private(set) var changes: [String] = []

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

    /// Adds a `WITH` query (`name AS (…)`), written with placeholders from ``bind(_:)``: run when the statement
    /// reads it, or at the end (after the change log's head is locked, when the statement appends entries).
    mutating func with(_ cte: String) {
        ctes.append(cte)
    }

    /// Adds a data-modifying `WITH` query named `name` (an `INSERT`, `UPDATE` or `DELETE` without `RETURNING`),
    /// to be run to its end before the change log's head is locked (see above). Its foreign keys are checked at
    /// the statement's end, after that lock: a change may write a reference only to a row its transaction has
    /// locked already (a product kept from deletion, its own new order), or the check could wait while it is held.
    mutating func change(_ name: String, _ query: String) {
        ctes.append("\(name) AS (\(query)\nRETURNING 1)")
        changes.append(name)
    }

    /// A condition that is true once every ``change(_:_:)`` has run to its end (it counts their rows): the
    /// change log's append puts it in its update of the head, which it evaluates before it locks the row.
    var changesDone: String {
        changes.isEmpty ? "true" : changes.map { "(SELECT COUNT(*) FROM \($0))" }.joined(separator: " + ") + " >= 0"
    }

    /// The statement: the `WITH` queries so far, then `body` (a query written with this statement's
    /// placeholders).
    func query(_ body: String) -> PostgresQuery {
        PostgresQuery(unsafeSQL: ctes.isEmpty ? body : "WITH " + ctes.joined(separator: ",\n") + "\n" + body, binds: binds)
    }
}
