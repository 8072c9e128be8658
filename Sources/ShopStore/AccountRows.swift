import Foundation
import GRDB
import Shop

/// Reading accounts and sessions from rows.
enum AccountRows {
    /// The account columns, in the order ``account(_:)`` reads them; the table must be aliased `a`.
    static let columns = "a.id, a.email, a.name, a.bio, a.notificationsEnabled, a.createdAt"

    /// An account from a row selected with ``columns`` (starting at `offset`).
    static func account(_ row: Row, offset: Int = 0) -> Account {
        Account(
            id: row[offset], email: row[offset + 1], name: row[offset + 2], bio: row[offset + 3],
            notificationsEnabled: row[offset + 4], createdAt: StoredDate.date(row[offset + 5]))
    }

    /// One account, or nil.
    static func account(_ db: Database, id: Int64) throws -> Account? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(columns) FROM account a WHERE a.id = ?"), arguments: [id])
            .map { account($0) }
    }

    /// Whether another account than `id` has `email` (case ignored).
    static func emailTaken(_ db: Database, _ email: String, except id: Int64? = nil) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM account WHERE email = ? AND id IS NOT ?)", arguments: [email, id]) == true
    }

    /// Sets the profile columns that `update` sets (already normalized) of account `id`; the others keep
    /// what is stored, whatever the screen that saves had loaded. Does nothing when no account has `id`.
    static func updateProfile(_ db: Database, id: Int64, _ update: ProfileUpdate) throws {
        try db.execute(sql: """
            UPDATE account SET name = COALESCE(?, name), email = COALESCE(?, email), bio = COALESCE(?, bio),
                notificationsEnabled = COALESCE(?, notificationsEnabled)
            WHERE id = ?
            """, arguments: [update.name, update.email, update.bio, update.notificationsEnabled, id])
    }

    /// Stores a new session of an account (its token only as a digest).
    static func insertSession(_ db: Database, _ session: NewSession, accountId: Int64) throws {
        try db.execute(sql: """
            INSERT INTO account_session (id, tokenDigest, accountId, createdAt, expiresAt) VALUES (?, ?, ?, ?, ?)
            """, arguments: [session.id, session.token.digest, accountId, StoredDate.milliseconds(session.createdAt),
                             StoredDate.milliseconds(session.expiresAt)])
    }

    /// Deletes sessions that ended or expired more than ``NewSession/retentionAfterEnd`` ago.
    static func pruneSessions(_ db: Database, now: Date) throws {
        let cutoff = NewSession.pruneBefore(now: now)
        try db.execute(sql: "DELETE FROM account_session WHERE expiresAt < ? OR endedAt < ?", arguments: [cutoff, cutoff])
    }
}
