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

    func record(of key: String) async throws -> (fingerprint: String, outcome: IdempotentOutcome)? {
        try await database.read { session in
            try await session.first("SELECT fingerprint, outcome FROM idempotency_key WHERE key = \(key)").map { row in
                let (fingerprint, outcome) = try row.decode((String, String).self)
                return (fingerprint, IdempotencyRecord.decode(outcome))
            }
        }
    }
}
