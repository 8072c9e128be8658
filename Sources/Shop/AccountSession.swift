import Foundation

/// A signed-in session as the account service issues it: the account, and the token a front end may keep
/// to resume the session in another server process.
public struct AccountSession: Equatable, Sendable {
    /// The signed-in account.
    public var account: Account
    /// Names the session (not secret): how a sign-out in one server reaches the others holding it.
    public var sessionId: String
    /// The secret a front end hands back to resume the session. Stored only as a hash; never in a state,
    /// a log or an error.
    public var token: String
    /// When the token stops working.
    public var expiresAt: Date
    /// Whether this sign-in created the session (registration, password), as opposed to resuming one that
    /// other tabs and servers may hold: only a new session may be revoked when its sign-in is abandoned.
    public var isNew: Bool

    /// Creates a session value.
    public init(account: Account, sessionId: String, token: String, expiresAt: Date, isNew: Bool = true) {
        self.account = account
        self.sessionId = sessionId
        self.token = token
        self.expiresAt = expiresAt
        self.isNew = isNew
    }
}
