import Credentials
import Foundation
import Shop

/// A session about to be stored for a sign-in: its id, its token (stored only as ``SessionToken/digest``)
/// and its expiry, made before the transaction that stores it (which may run more than once).
package struct NewSession: Sendable {
    /// How long a session that ended or expired is kept: its token resumes nothing already, and the day
    /// keeps a sign-out visible to servers that read the change log late.
    package static let retentionAfterEnd: TimeInterval = 24 * 60 * 60

    /// Names the session (not secret).
    package let id: String
    /// The secret the client keeps.
    package let token: SessionToken
    /// When the session starts.
    package let createdAt: Date
    /// When its token stops working.
    package let expiresAt: Date

    /// A new session starting at `now`, lasting ``AccountRules/sessionLifetime``.
    package init(at now: Date) {
        id = SecureRandom.identifier()
        token = SessionToken.generate()
        createdAt = now
        expiresAt = now.addingTimeInterval(AccountRules.sessionLifetime)
    }

    /// What the sign-in answers once the session is stored for `account`.
    package func signedIn(_ account: Account) -> AccountSession {
        AccountSession(account: account, sessionId: id, token: token.value, expiresAt: expiresAt)
    }

    /// Sessions that ended or expired before this time (stored milliseconds) are deleted.
    package static func pruneBefore(now: Date) -> Int64 {
        StoredDate.milliseconds(now.addingTimeInterval(-retentionAfterEnd))
    }
}
