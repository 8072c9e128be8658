import Foundation
import PostgresNIO
import Shop
import ShopStore

/// The change log on PostgreSQL: the same entries, kinds and retention as the SQLite store's (`ChangeLog`),
/// written in the transaction that stores the change.
///
/// **Numbering in commit order.** A follower reads "entries after the last one I published", so an entry
/// must never become visible after one with a higher number. A sequence (`BIGSERIAL`) hands out numbers
/// when rows are inserted, not when their transactions commit, so a follower could read 11 before 10
/// commits and skip 10 for good. Here the number comes from the single row of `change_log_head`, updated
/// in the writing transaction: its row lock is held until that transaction ends, so the next writer gets
/// the next number only after this one committed (or rolled back, and its number with it: no gaps). The
/// cost is that writers queue from their first log entry to their commit; the services append entries at
/// the end of their transactions to keep that window short.
///
/// **Wake-up.** Each entry sends `NOTIFY` on ``channel``, delivered by the server when (and only if) the
/// transaction commits. The payload is the entry's number, a hint that lets a listener that published it
/// already skip a read; it is never the data, which followers read from the log (payloads are limited in
/// size and not stored: a listener that was disconnected misses them, and reads the log when it is back).
enum PostgresChangeLog {
    /// The `LISTEN`/`NOTIFY` channel of the log.
    static let channel = "storefront_change_log"

    /// Appends an entry in the current transaction and returns its number; now and then prunes.
    @discardableResult
    static func append(_ session: PostgresSession, _ kind: ChangeLog.Kind, _ subject: String = "", at now: Date) async throws -> Int64 {
        try await append(session, [(kind, subject)], at: now)[0]
    }

    /// Appends `entries`, numbered in their order, in the current transaction and in one statement with
    /// `statement`'s changes (its data-modifying `WITH` queries): the changes and their entries cost one round
    /// trip. Returns the entries' numbers in order; now and then prunes.
    ///
    /// The head's row is updated once for all of them, so its lock is taken once and held from here to the
    /// commit, as for one entry; and only once `statement`'s changes are done (``PostgresStatement/changesDone``),
    /// so that no wait of theirs for another transaction's row lock holds up every writer of the database.
    static func append(
        _ session: PostgresSession, _ entries: [(kind: ChangeLog.Kind, subject: String)], at now: Date,
        after statement: PostgresStatement = PostgresStatement()
    ) async throws -> [Int64] {
        try await append(session, entries, at: now, after: statement, returning: "NULL::bigint", as: Int64?.self).seqs
    }

    /// ``append(_:_:at:after:)``, and the value of `column`, an expression over `statement`'s `WITH` queries (a
    /// count their changes return, say), selected with the entries.
    static func append<Value: PostgresDecodable>(
        _ session: PostgresSession, _ entries: [(kind: ChangeLog.Kind, subject: String)], at now: Date,
        after statement: PostgresStatement, returning column: String, as type: Value.Type
    ) async throws -> (seqs: [Int64], value: Value) {
        precondition(!entries.isEmpty, "no entries to append")
        let milliseconds = StoredDate.milliseconds(now)
        var statement = statement
        let count = try statement.bind(Int64(entries.count))
        let at = try statement.bind(milliseconds)
        let kinds = try statement.bind(entries.map(\.kind.rawValue))
        let subjects = try statement.bind(entries.map(\.subject))
        let channel = try statement.bind(Self.channel)
        // The statement's changes first (their row locks waited for), then the head's lock, held to the commit.
        statement.with("next_seq AS (UPDATE change_log_head SET seq = seq + \(count) WHERE id = 1 AND \(statement.changesDone) RETURNING seq)")
        statement.with("""
            entry AS (INSERT INTO change_log (seq, at, kind, subject)
                      SELECT next_seq.seq - \(count) + e.position, \(at), e.kind, e.subject
                      FROM next_seq, unnest(\(kinds)::text[], \(subjects)::text[]) WITH ORDINALITY AS e(kind, subject, position)
                      RETURNING seq)
            """)
        let rows = try await session.rows(statement.query("SELECT seq, \(column), pg_notify(\(channel), seq::text) FROM entry ORDER BY seq"))
            .map { try $0.decode((Int64, Value).self) }
        let seqs = rows.map(\.0)
        guard seqs.count == entries.count, let value = rows.first?.1 else {
            throw ShopError(reason: ShopError.Reason.storageFailed, message: "The change log has no head row.")
        }
        for seq in seqs { session.ownEntries?.note(seq) }
        if let last = seqs.last, last / ChangeLog.pruneEvery > (seqs[0] - 1) / ChangeLog.pruneEvery {
            try await prune(session, lastSeq: last, now: milliseconds)
        }
        return (seqs, value)
    }

    /// Deletes entries (and idempotency keys) past their retention, and entries beyond the last
    /// `ChangeLog.maximumEntries`.
    static func prune(_ session: PostgresSession, lastSeq: Int64, now milliseconds: Int64) async throws {
        let cutoff = milliseconds - Int64(ChangeLog.retention * 1000)
        try await session.execute("DELETE FROM change_log WHERE seq <= \(lastSeq - ChangeLog.maximumEntries) OR at < \(cutoff)")
        try await session.execute("DELETE FROM idempotency_key WHERE at < \(cutoff)")
    }

    /// The number of the last entry ever written (0 before the first; pruning does not lower it).
    static func lastSeq(_ session: PostgresSession) async throws -> Int64 {
        try await session.value("SELECT seq FROM change_log_head WHERE id = 1", as: Int64.self) ?? 0
    }

    /// Up to `limit` entries after `seq`, oldest first, with the number of the last entry written and of the
    /// oldest kept: one statement, so all three are of one snapshot.
    static func log(
        _ session: PostgresSession, after seq: Int64, limit: Int
    ) async throws -> (entries: [ChangeLog.Entry], firstKept: Int64?, lastWritten: Int64) {
        let rows = try await session.rows(LogRead(after: seq, limit: Int64(limit)))
        var entries: [ChangeLog.Entry] = []
        var firstKept: Int64?
        var lastWritten: Int64 = 0
        for row in rows {
            let (head, first, entrySeq, kind, subject) = try row.decode((Int64, Int64?, Int64?, String?, String?).self)
            (lastWritten, firstKept) = (head, first)
            if let entrySeq, let kind, let subject { entries.append(ChangeLog.Entry(seq: entrySeq, kind: ChangeLog.Kind(rawValue: kind), subject: subject)) }
        }
        return (entries, firstKept, lastWritten)
    }

    /// The read of ``log(_:after:limit:)``, prepared: every batch of every follower.
    private struct LogRead: PostgresPreparedQuery {
        static let name = "storefront_log_batch"
        static let sql = """
            SELECT h.seq, (SELECT MIN(seq) FROM change_log), e.seq, e.kind, e.subject
            FROM change_log_head h
            LEFT JOIN LATERAL (SELECT seq, kind, subject FROM change_log WHERE seq > $1 ORDER BY seq LIMIT $2) e ON true
            WHERE h.id = 1
            ORDER BY e.seq
            """
        let after: Int64
        let limit: Int64
        func makeBindings() throws -> PostgresBindings { try .values(after, limit) }
    }
}

/// A PostgreSQL database's change log, read for a `ChangeFeed`: each batch in one snapshot.
struct PostgresChangeLogSource: ChangeLogSource {
    let database: PostgresShopDatabase

    func lastSeq() async throws -> Int64 {
        try await database.read(failingFast: false) { try await PostgresChangeLog.lastSeq($0) }
    }

    /// The batch in one statement when none of its entries needs data read (this server's own entries, other
    /// shoppers' carts, favourites), which is its own snapshot; otherwise in a read-only snapshot whose first
    /// statement reads the log again, and whose next ones read the data.
    func batch(after seq: Int64, knownSeqs: Set<Int64>, shown: ShownShoppers?, limit: Int) async throws -> ChangeBatch {
        let alone = try await database.read(failingFast: false) { session -> ChangeBatch? in
            let log = try await PostgresChangeLog.log(session, after: seq, limit: limit)
            let readings = ChangeLog.readings(of: log.entries, knownSeqs: knownSeqs, shown: shown)
            guard !readings.contains(where: \.needsRead) else { return nil }
            return try await Self.batch(log, readings, session: session)
        }
        if let alone { return alone }
        return try await database.snapshot(failingFast: false) { session in
            let log = try await PostgresChangeLog.log(session, after: seq, limit: limit)
            return try await Self.batch(log, ChangeLog.readings(of: log.entries, knownSeqs: knownSeqs, shown: shown), session: session)
        }
    }

    /// The batch of `log`'s entries, with the events each reading says, read through `session`.
    private static func batch(
        _ log: (entries: [ChangeLog.Entry], firstKept: Int64?, lastWritten: Int64), _ readings: [ChangeLog.Reading], session: PostgresSession
    ) async throws -> ChangeBatch {
        var entries: [(seq: Int64, events: [ShopEvent])] = []
        for (entry, reading) in zip(log.entries, readings) {
            guard case .read(let meaning) = reading else {
                entries.append((entry.seq, []))
                continue
            }
            entries.append((entry.seq, try await events(of: meaning, session: session)))
        }
        return ChangeBatch(entries: entries, firstKept: log.firstKept, lastWritten: log.lastWritten)
    }

    /// The events of an entry, with the data it names as it is in the snapshot.
    static func events(of meaning: ChangeLog.Meaning, session: PostgresSession) async throws -> [ShopEvent] {
        switch meaning {
        case .cart(let shopper):
            return [.cartChanged(try await PostgresRows.cart(session, of: shopper), shopper: shopper)]
        case .favorite(let productId, let isFavorite, let shopper):
            return [.favoriteChanged(productId: productId, isFavorite: isFavorite, shopper: shopper)]
        case .order(let id):
            return try await PostgresRows.order(session, id: id).map { [.orderPlaced($0.order, shopper: $0.shopper)] } ?? []
        case .productCreated(let id):
            return try await PostgresRows.product(session, id: id).map { [.productCreated($0)] } ?? []
        case .productsDeleted(let ids):
            return [.productsDeleted(ids)]
        case .shopper(let shopper):
            return [.shopperDataChanged(shopper)]
        case .account(let id):
            return try await PostgresRows.account(session, id: id).map { [.accountChanged($0)] } ?? []
        case .sessionEnded(let sessionId):
            return [.sessionEnded(sessionId: sessionId)]
        case .productChanged(let id):
            return try await PostgresRows.product(session, id: id).map { [.productChanged($0)] } ?? []
        case .productMoved(let productId, let from, let to):
            return [.productMoved(productId: productId, from: from, to: to)]
        case .productRestocked(let productId):
            return [.productRestocked(productId: productId)]
        case .notification(let seq, let replacing):
            guard let (notification, owner, unread) = try await PostgresInboxRows.notification(session, seq: seq) else { return [] }
            return [.notificationArrived(notification, replacing: replacing, unreadCount: unread, shopper: owner)]
        case .notificationsRead(let owner, let ids):
            return [.notificationsRead(ids: ids, unreadCount: try await PostgresInboxRows.unreadCount(session, owner: owner), shopper: owner)]
        case .resync:
            return [.resync]
        case .nothing:
            return []
        }
    }
}
