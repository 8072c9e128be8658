import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Idempotency keys on PostgreSQL, recorded in the transaction of the change they keyed (table
/// `idempotency_key`, as in the SQLite store).
enum PostgresIdempotency {
    /// Checks `key` in the current transaction, first taking a transaction-scoped advisory lock on it: two
    /// servers given the same key at once apply the change once, the second then finds the first's record.
    /// - Throws: ``ShopError`` `idempotencyKeyReused` when the key was recorded with another request.
    static func check(_ session: PostgresSession, _ key: IdempotencyKey?) async throws -> IdempotencyRecord.Check {
        guard let key else { return .apply }
        try await session.execute("SELECT pg_advisory_xact_lock(hashtextextended(\(key.key), 0))")
        guard let row = try await session.first("SELECT fingerprint, outcome FROM idempotency_key WHERE key = \(key.key)") else {
            return .apply
        }
        let (fingerprint, outcome) = try row.decode((String, String).self)
        guard fingerprint == key.fingerprint else { throw ShopError.idempotencyKeyReused(key.key) }
        return .replay(IdempotencyRecord.decode(outcome))
    }

    /// Records `key` with the outcome of the change just applied, in the current transaction.
    static func record(_ session: PostgresSession, _ key: IdempotencyKey?, outcome: IdempotentOutcome = [:], at now: Date) async throws {
        var statement = PostgresStatement()
        try record(key, outcome: outcome, at: now, in: &statement)
        guard !statement.ctes.isEmpty else { return }
        try await session.execute(statement.query("SELECT 1"))
    }

    /// Adds the record of `key` (nothing without a key) to `statement`, to be stored with the change it keys
    /// in the same round trip (a change named `keyed`).
    static func record(_ key: IdempotencyKey?, outcome: IdempotentOutcome = [:], at now: Date, in statement: inout PostgresStatement) throws {
        guard let key else { return }
        let values = [
            try statement.bind(key.key), try statement.bind(key.fingerprint), try statement.bind(IdempotencyRecord.encode(outcome)),
            try statement.bind(StoredDate.milliseconds(now)),
        ]
        statement.change("keyed", "INSERT INTO idempotency_key (key, fingerprint, outcome, at) VALUES (\(values.joined(separator: ", ")))")
    }
}

/// Idempotency records over PostgreSQL.
struct PostgresIdempotencyService: IdempotencyService {
    let database: PostgresShopDatabase
    let feed: ChangeFeed

    /// A record found is another write's outcome, about to be replayed as a success: the change it keyed is
    /// shown on this server's ViewModels first (it may be another server's, which this server has not heard of
    /// yet), as a first attempt's answer comes after what it stored is shown. The log's head is read in the
    /// record's statement, one snapshot, so publishing up to it includes the change.
    func record(of key: String) async throws -> (fingerprint: String, outcome: IdempotentOutcome)? {
        let found = try await database.read { session in
            try await session.first("""
                SELECT k.fingerprint, k.outcome, (SELECT seq FROM change_log_head WHERE id = 1)
                FROM idempotency_key k WHERE k.key = \(key)
                """).map { row in
                let (fingerprint, outcome, head) = try row.decode((String, String, Int64?).self)
                return (record: (fingerprint, IdempotencyRecord.decode(outcome)), head: head ?? 0)
            }
        }
        guard let found else { return nil }
        await feed.published(through: found.head)
        return found.record
    }

    func publishStoredChanges() async {
        await feed.publishedToHead()
    }
}
