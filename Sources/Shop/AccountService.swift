/// Accounts: registration, sign-in with a password or a kept session token, sign-out, profiles, and
/// handing a guest's data to the account it signs in to.
///
/// Live implementations store passwords only as a slow salted hash and tokens only as a digest, publish
/// ``ShopEvent/accountChanged(_:)`` after a profile change and ``ShopEvent/sessionEnded(sessionId:)``
/// after a sign-out, so every server holding the account or the session follows.
public protocol AccountService: Sendable {
    /// Creates an account and signs it in. The first account registered on a database from before accounts
    /// also adopts the legacy guest's cart, favourites and orders (see ``Shopper/legacyGuest``).
    /// - Throws: ``ShopError`` `validationFailed` (`details` by field: `email`, `password`), `emailTaken`.
    func register(email: String, password: String) async throws -> AccountSession

    /// Signs in with an email and a password.
    /// - Throws: ``ShopError`` `invalidCredentials` (the same for an unknown email and a wrong password,
    ///   after the same work), `signInLocked` (too many failures for this email lately; `details.retryAfter`
    ///   in seconds and `details.lockedUntil`).
    func signIn(email: String, password: String) async throws -> AccountSession

    /// Resumes a session from its token (in this or another server process).
    /// - Throws: ``ShopError`` `sessionInvalid` for a token that is malformed, unknown, expired or signed out.
    func resume(token: String) async throws -> AccountSession

    /// Ends a session: its token stops working everywhere.
    func signOut(sessionId: String) async throws

    /// The account as stored.
    /// - Throws: ``ShopError`` `sessionInvalid` when it no longer exists.
    func account(id: Int64) async throws -> Account

    /// Saves the fields of a profile that `update` sets, in one transaction; the others keep what is stored
    /// then, so a save never puts back a value another save stored meanwhile. An update that sets nothing
    /// writes nothing and answers the account as stored.
    /// - Returns: The account as stored after the save.
    /// - Throws: ``ShopError`` `validationFailed` (by field, for the fields it sets), `emailTaken`,
    ///   `sessionInvalid` when the account no longer exists; ``ShopError/sessionEnded`` when saved for a
    ///   signed-in session (``WritingSession``) that was signed out or expired in the store (nothing saved).
    func updateProfile(accountId: Int64, _ update: ProfileUpdate) async throws -> Account

    /// Moves a guest's cart lines (merged, quantities capped by stock and the per-order maximum) and
    /// favourites to an account, in one transaction; the guest keeps nothing.
    func adoptGuest(_ guestId: String, into accountId: Int64) async throws -> GuestAdoption

    /// The account of a session that is still signed in and unexpired, or nil when it ended.
    func activeAccount(sessionId: String) async throws -> Account?
}
