import Foundation
import GRDB
import Shop

/// The durable change feed: every stored change writes a sequence-numbered entry into `change_log` in
/// the transaction that stores it, so the log and the data never disagree. Every server follows the log
/// (``ChangeFeed``): its own commits at once, other processes' by a short poll.
///
/// An entry names what changed, not the new data: followers read the current data when they publish.
/// The log is bounded: entries older than ``retention`` or beyond the last ``maximumEntries`` are pruned
/// now and then by the writers; a follower that fell behind the pruned part reloads everything it shows.
/// The same table and rules hold on PostgreSQL (`PostgresStore`'s `PostgresChangeLog`, with `NOTIFY` as the
/// wake-up instead of the poll).
package enum ChangeLog {
    /// What an entry says changed.
    package enum Kind: String, Sendable {
        /// A shopper's cart lines (subject the shopper's storage key).
        case cart
        /// A favourite mark (subject: see ``favoriteSubject(owner:productId:isFavorite:)``).
        case favorite
        /// An order was placed (subject its id); stock of its products changed.
        case order
        /// A product was created (subject its id).
        case productCreated
        /// Products were deleted (subject their ids, comma-separated).
        case productsDeleted
        /// The catalog was replaced (seeding): everything is to be reloaded.
        case reset
        /// Several parts of a shopper's data changed (a guest's adopted at sign-in; subject the storage key).
        case shopper
        /// An account's profile changed (subject its id).
        case account
        /// A session was signed out (subject its id).
        case sessionEnded
        /// An existing product's price, stock or text changed (subject its id).
        case productChanged
        /// A product moved to another category (subject `<id> <from> <to>`), written after its
        /// ``productChanged`` entry.
        case productMoved
        /// A product came back in stock, from 0 to more (subject its id), written after its
        /// ``productChanged`` entry.
        case productRestocked
        /// A notification arrived (subject its id, then the id of the unread one it replaced, if any,
        /// after a space).
        case notification
        /// Notifications were marked read (subject `<owner> <id>,<id>`, the ids that were unread; `<owner> *`
        /// reads as all).
        case notificationsRead
    }

    /// One entry.
    package struct Entry: Sendable {
        /// The entry's number in the log.
        package var seq: Int64
        /// What changed; nil for a kind this version does not know (read as a reason to reload).
        package var kind: Kind?
        /// What it changed (see ``Kind``).
        package var subject: String

        /// An entry as read.
        package init(seq: Int64, kind: Kind?, subject: String) {
            self.seq = seq
            self.kind = kind
            self.subject = subject
        }
    }

    /// How long entries are kept.
    package static let retention: TimeInterval = 24 * 60 * 60
    /// How many entries are kept at most.
    package static let maximumEntries: Int64 = 10_000
    /// Pruning runs when a new entry's number is a multiple of this.
    package static let pruneEvery: Int64 = 500

    private static let appendSQL = StatementSQL("INSERT INTO change_log (at, kind, subject) VALUES (?, ?, ?)")

    /// Appends an entry in the current transaction and returns its number; now and then prunes.
    @discardableResult
    static func append(_ db: Database, _ kind: Kind, _ subject: String = "", at now: Date) throws -> Int64 {
        let milliseconds = StoredDate.milliseconds(now)
        try DirectStatement(db, appendSQL).execute([.integer(milliseconds), .text(kind.rawValue), .text(subject)])
        let seq = db.lastInsertedRowID
        if seq % pruneEvery == 0 { try prune(db, lastSeq: seq, now: milliseconds) }
        return seq
    }

    /// Deletes entries (and idempotency keys) past their retention, and entries beyond the last
    /// ``maximumEntries``; never the newest entry (`lastSeq`), whose number the next one follows
    /// (``lastSeqSQL``).
    ///
    /// An entry is past its retention when it is older than the cutoff and so is every entry before it: the
    /// walk in number order stops at the first young entry (with no index on the time, which every append
    /// would write). Entries are numbered in the order they are written, so their times only go back where
    /// servers' clocks disagree; an old entry after a young one then waits for a later prune.
    package static func prune(_ db: Database, lastSeq: Int64, now milliseconds: Int64) throws {
        let cutoff = milliseconds - Int64(retention * 1000)
        try db.execute(
            sql: """
                DELETE FROM change_log WHERE seq < ?1 AND (
                    seq <= ?1 - ?2 OR seq < COALESCE((SELECT seq FROM change_log WHERE at >= ?3 ORDER BY seq LIMIT 1), ?1))
                """,
            arguments: [lastSeq, maximumEntries, cutoff])
        try db.execute(sql: "DELETE FROM idempotency_key WHERE at < ?", arguments: [cutoff])
    }

    /// The subject of a favourite entry: `<owner> <productId>:1` (marked) or `:0` (unmarked). Owner keys
    /// hold no space.
    package static func favoriteSubject(owner: String, productId: String, isFavorite: Bool) -> String {
        "\(owner) \(productId):\(isFavorite ? 1 : 0)"
    }

    /// The subject of a `notificationsRead` entry: `<owner> <id>,<id>,…`, naming the notifications that
    /// changed (never "all": an inbox that loaded a newer one meanwhile keeps that one unread).
    package static func notificationsReadSubject(owner: Shopper, ids: [String]) -> String {
        "\(owner.storageKey) \(ids.joined(separator: ","))"
    }

    /// The query of the last entry's number: the largest kept, as pruning keeps the newest entry (and a
    /// rolled-back append's number is taken again, as it is not seen). NULL, read as 0, before the first
    /// entry. Also run by ``ChangeLogProbe``.
    static let lastSeqSQL = "SELECT MAX(seq) FROM change_log"

    /// The number of the last entry ever written (0 before the first; pruning does not lower it).
    package static func lastSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: lastSeqSQL)) ?? 0
    }

    /// The number of the oldest entry kept, or nil when the log is empty.
    static func firstSeq(_ db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(seq) FROM change_log"))
    }

    /// Up to `limit` entries after `seq`, oldest first.
    static func entries(_ db: Database, after seq: Int64, limit: Int) throws -> [Entry] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT seq, kind, subject FROM change_log WHERE seq > ? ORDER BY seq LIMIT ?"),
            arguments: [seq, limit]
        ).map { Entry(seq: $0[0], kind: Kind(rawValue: $0[1]), subject: $0[2]) }
    }
}
