import Foundation
import GRDB
import Shop

/// Idempotency keys recorded in the transaction of the change they keyed (table `idempotency_key`).
package enum IdempotencyRecord {
    /// What a keyed write found.
    package enum Check {
        /// The key is new (or there is none): apply the change and record it.
        case apply
        /// The key was recorded with the same request: do not apply again; answer from the outcome.
        case replay(IdempotentOutcome)
    }

    /// Checks `key` in the current transaction.
    /// - Throws: ``ShopError`` `idempotencyKeyReused` when the key was recorded with another request.
    static func check(_ db: Database, _ key: IdempotencyKey?) throws -> Check {
        guard let key, let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT fingerprint, outcome FROM idempotency_key WHERE key = ?"), arguments: [key.key])
        else { return .apply }
        guard row[0] as String == key.fingerprint else { throw ShopError.idempotencyKeyReused(key.key) }
        return .replay(decode(row[1]))
    }

    /// Records `key` with the outcome of the change just applied, in the current transaction.
    static func record(_ db: Database, _ key: IdempotencyKey?, outcome: IdempotentOutcome = [:], at now: Date) throws {
        guard let key else { return }
        try db.cachedStatement(sql: "INSERT INTO idempotency_key (key, fingerprint, outcome, at) VALUES (?, ?, ?, ?)")
            .execute(arguments: [key.key, key.fingerprint, encode(outcome), StoredDate.milliseconds(now)])
    }

    /// The record of `key`, if any.
    static func record(_ db: Database, key: String) throws -> (fingerprint: String, outcome: IdempotentOutcome)? {
        try Row.fetchOne(db, sql: "SELECT fingerprint, outcome FROM idempotency_key WHERE key = ?", arguments: [key])
            .map { ($0[0], decode($0[1])) }
    }

    /// `key=value` lines; keys and values are identifiers without newlines or `=`.
    package static func encode(_ outcome: IdempotentOutcome) -> String {
        outcome.keys.sorted().map { "\($0)=\(outcome[$0]!)" }.joined(separator: "\n")
    }

    package static func decode(_ text: String) -> IdempotentOutcome {
        Dictionary(text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            return parts.count == 2 ? (parts[0], parts[1]) : nil
        }, uniquingKeysWith: { _, last in last })
    }
}

/// Idempotency records over the shop database.
struct LiveIdempotencyService: IdempotencyService {
    let database: ShopDatabase
    let feed: ChangeFeed

    /// A record found is another write's outcome, about to be replayed as a success, so two things come first:
    /// - the change it keyed is shown on this server's ViewModels: it may be another server's, which this
    ///   server's poll has not read yet, and a replay is answered after what it stored is shown, as a first
    ///   attempt is. The log's head is read in the record's snapshot, so publishing up to it includes the change;
    /// - when this server's log is synced on demand, a sync is asked for, since the process that wrote it may not
    ///   have synced it (its answer waits for the sync, as a write's does).
    func record(of key: String) async throws -> (fingerprint: String, outcome: IdempotentOutcome)? {
        let found = try await StorageError.mapping {
            try await database.writer.read { db in
                try IdempotencyRecord.record(db, key: key).map { record in (record, head: try ChangeLog.lastSeq(db)) }
            }
        }
        guard let (record, head) = found else { return nil }
        database.logSync?.requestSync()
        await feed.published(through: head)
        return record
    }

    func publishStoredChanges() async {
        await feed.publishedToHead()
    }
}
