import Credentials
import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Accounts over PostgreSQL, with the SQLite store's rules (`LiveAccountService`): passwords stored only as
/// Argon2id hashes, session tokens only as SHA-256 digests, failed sign-ins counted per email in the
/// database, so every server on it enforces one lock.
///
/// Hashing runs before or between transactions, never inside one: a transaction may be run again after a
/// conflict, and a connection should not be held for the ~70 ms a hash takes. At most two hashes run at once
/// per process (``HashingGate``).
///
/// Where SQLite's single writer made a check-then-write safe, PostgreSQL transactions run side by side, and
/// each such place here says what makes it safe: the unique index on `lower(email)` (registration, profile
/// email), a per-email advisory lock (the sign-in failure count), the cart's revision row (adopting a guest).
struct PostgresAccountService: AccountService {
    let database: PostgresShopDatabase
    let feed: ChangeFeed
    let hasher: PasswordHasher
    let now: @Sendable () -> Date
    let gate: HashingGate

    /// The class of the advisory locks on sign-in failure counts (the two-key form, whose keys never meet
    /// the single-key locks of migrations and idempotency keys): "SIGN" in ASCII.
    static let signInLockClass: Int32 = 0x5349_474E

    // MARK: Registration and sign-in

    func register(email: String, password: String) async throws -> AccountSession {
        let email = try CredentialChecks.registration(email: email, password: password)
        // Hashed before the email is looked up: a registration is how an email's existence can be learnt
        // (the issue wants a taken email named), so each try costs what a sign-in attempt does.
        let hash = try await gate.run { [hasher] in try hasher.hash(password) }
        let now = now()
        let newSession = NewSession(at: now)
        let (account, seq) = try await database.write { session -> (Account, Int64?) in
            // The unique index decides, not a look-up first: two servers registering one email at once both
            // insert; the second waits for the first to commit, then inserts nothing and is told the email
            // is taken. (A look-up would see neither's uncommitted row.)
            guard let account = try await session.first("""
                INSERT INTO account AS a (email, passwordHash, name, bio, notificationsEnabled, createdAt)
                VALUES (\(email), \(hash), \(AccountRules.defaultName(forEmail: email)), '', TRUE, \(StoredDate.milliseconds(now)))
                ON CONFLICT ((lower(email))) DO NOTHING
                RETURNING \(unescaped: PostgresRows.accountColumns)
                """).map(PostgresRows.account)
            else { throw ShopError.emailTaken(email) }
            try await Self.insertSession(session, newSession, accountId: account.id)
            return (account, try await Self.adoptLegacyData(session, into: account.shopper, at: now))
        }
        if let seq { await feed.committed(seq, [.shopperDataChanged(account.shopper)]) }
        return newSession.signedIn(account)
    }

    func signIn(email: String, password: String) async throws -> AccountSession {
        // Malformed input is refused before anything is read or stored (it names no account).
        let email = try CredentialChecks.signIn(email: email, password: password)
        let now = now()
        // The attempt is counted as a failure before the password is checked, in the transaction that
        // checks the lock; a success removes the count. The email's advisory lock, held until that
        // transaction ends, makes attempts sent in parallel (to any server) count one after another:
        // without it each would read the failures committed before any of them, and all would pass.
        let stored = try await database.write { session -> (id: Int64, hash: String)? in
            try await session.execute("SELECT pg_advisory_xact_lock(\(Self.signInLockClass), hashtext(lower(\(email))))")
            try await session.execute("DELETE FROM sign_in_failure WHERE at < \(SignInLock.windowStart(now: now))")
            try SignInLock.check(failures: try await Self.recentFailures(session, email: email, now: now), now: now)
            try await session.execute("INSERT INTO sign_in_failure (email, at) VALUES (\(email), \(StoredDate.milliseconds(now)))")
            return try await session.first("SELECT id, passwordHash FROM account WHERE lower(email) = lower(\(email))")
                .map { try $0.decode((Int64, String).self) }
        }
        // The same work for an unknown email as for a wrong password: the answer's time tells nothing.
        let verified = await gate.run { [hasher] in
            guard let stored else {
                hasher.verifyWithoutAccount(password)
                return false
            }
            return hasher.verify(password, against: stored.hash)
        }
        guard verified, let stored else {
            let failures = try await database.read { session in try await Self.recentFailures(session, email: email, now: now) }
            try SignInLock.check(failures: failures, now: now)
            throw ShopError.invalidCredentials
        }
        let rehash = hasher.needsRehash(stored.hash) ? try? await gate.run { [hasher] in try hasher.hash(password) } : nil
        let newSession = NewSession(at: now)
        let account = try await database.write { session -> Account in
            try await session.execute("DELETE FROM sign_in_failure WHERE lower(email) = lower(\(email))")
            if let rehash { try await session.execute("UPDATE account SET passwordHash = \(rehash) WHERE id = \(stored.id)") }
            let cutoff = NewSession.pruneBefore(now: now)
            try await session.execute("DELETE FROM account_session WHERE expiresAt < \(cutoff) OR endedAt < \(cutoff)")
            try await Self.insertSession(session, newSession, accountId: stored.id)
            guard let account = try await PostgresRows.account(session, id: stored.id) else { throw ShopError.invalidCredentials }
            return account
        }
        return newSession.signedIn(account)
    }

    func resume(token: String) async throws -> AccountSession {
        guard let parsed = SessionToken(parsing: token) else { throw ShopError.sessionInvalid }
        let now = StoredDate.milliseconds(now())
        let found = try await database.read { session -> (Account, String, Int64)? in
            guard let row = try await session.first("""
                SELECT \(unescaped: PostgresRows.accountColumns), s.id, s.expiresAt
                FROM account_session s JOIN account a ON a.id = s.accountId
                WHERE s.tokenDigest = \(parsed.digest) AND s.endedAt IS NULL AND s.expiresAt > \(now)
                """)
            else { return nil }
            let columns = row.makeRandomAccess()
            return (try PostgresRows.account(row), try columns[6].decode(String.self), try columns[7].decode(Int64.self))
        }
        guard let (account, sessionId, expiresAt) = found else { throw ShopError.sessionInvalid }
        return AccountSession(
            account: account, sessionId: sessionId, token: parsed.value, expiresAt: StoredDate.date(expiresAt), isNew: false)
    }

    func signOut(sessionId: String) async throws {
        let now = now()
        let seq = try await database.write { session -> Int64? in
            // A sign-out of the same session from another server at the same time waits for this row, then
            // finds it ended and changes nothing: the session ends once, with one log entry.
            let ended = try await session.execute("""
                UPDATE account_session SET endedAt = \(StoredDate.milliseconds(now))
                WHERE id = \(sessionId) AND endedAt IS NULL RETURNING 1
                """)
            guard ended > 0 else { return nil }
            return try await PostgresChangeLog.append(session, .sessionEnded, sessionId, at: now)
        }
        if let seq { await feed.committed(seq, [.sessionEnded(sessionId: sessionId)]) }
    }

    func activeAccount(sessionId: String) async throws -> Account? {
        let now = StoredDate.milliseconds(now())
        return try await database.read { session in
            try await session.first("""
                SELECT \(unescaped: PostgresRows.accountColumns) FROM account_session s JOIN account a ON a.id = s.accountId
                WHERE s.id = \(sessionId) AND s.endedAt IS NULL AND s.expiresAt > \(now)
                """).map(PostgresRows.account)
        }
    }

    // MARK: Profiles

    func account(id: Int64) async throws -> Account {
        guard let account = try await database.read({ session in try await PostgresRows.account(session, id: id) }) else {
            throw ShopError.sessionInvalid
        }
        return account
    }

    func updateProfile(accountId: Int64, _ update: ProfileUpdate) async throws -> Account {
        let errors = AccountRules.errors(for: update)
        guard errors.isEmpty else { throw ShopError.validationFailed(errors) }
        let update = update.normalized
        let key = IdempotencyKey.current
        let sessionId = WritingSession.id
        let now = now()
        let (account, seq) = try await database.write { session -> (Account, Int64?) in
            try await PostgresSessionCheck.requireLive(session, sessionId, at: now)
            if case .replay = try await PostgresIdempotency.check(session, key) {
                guard let account = try await PostgresRows.account(session, id: accountId) else { throw ShopError.sessionInvalid }
                return (account, nil)
            }
            guard !update.isEmpty else {
                // An update that sets nothing writes nothing, so there is nothing for other servers to follow.
                guard let account = try await PostgresRows.account(session, id: accountId) else { throw ShopError.sessionInvalid }
                try await PostgresIdempotency.record(session, key, at: now)
                return (account, nil)
            }
            let updated: Account?
            do {
                // Only the columns the update sets: the others keep what is stored when the row is locked
                // (after a concurrent update commits, the newest version's), not what the screen loaded.
                updated = try await session.first("""
                    UPDATE account AS a SET name = COALESCE(\(update.name), a.name), email = COALESCE(\(update.email), a.email),
                        bio = COALESCE(\(update.bio), a.bio),
                        notificationsEnabled = COALESCE(\(update.notificationsEnabled), a.notificationsEnabled)
                    WHERE a.id = \(accountId)
                    RETURNING \(unescaped: PostgresRows.accountColumns)
                    """).map(PostgresRows.account)
            } catch where PostgresStorageError.sqlState(error) == Self.uniqueViolation {
                // The unique index on lower(email), the only unique column the update can set: another
                // account has the email (perhaps committed a moment ago by another server).
                guard let email = update.email else { throw error }
                throw ShopError.emailTaken(email)
            }
            guard let updated else { throw ShopError.sessionInvalid }
            try await PostgresIdempotency.record(session, key, at: now)
            return (updated, try await PostgresChangeLog.append(session, .account, String(accountId), at: now))
        }
        if let seq { await feed.committed(seq, [.accountChanged(account)]) }
        return account
    }

    /// SQLSTATE `unique_violation`.
    private static let uniqueViolation = "23505"

    // MARK: A guest's data

    func adoptGuest(_ guestId: String, into accountId: Int64) async throws -> GuestAdoption {
        let guest = Shopper.guest(guestId)
        let account = Shopper.account(accountId)
        let now = now()
        let (adoption, seq) = try await database.write { session -> (GuestAdoption, Int64?) in
            guard let capped = try await Self.moveCartAndFavorites(session, from: guest, to: account) else {
                return (GuestAdoption(cart: try await PostgresRows.cart(session, of: account), capped: []), nil)
            }
            let seq = try await PostgresChangeLog.append(session, .shopper, account.storageKey, at: now)
            return (GuestAdoption(cart: try await PostgresRows.cart(session, of: account), capped: capped), seq)
        }
        if let seq { await feed.committed(seq, [.shopperDataChanged(account)]) }
        return adoption
    }

    /// Merges `guest`'s cart lines into `account`'s (each capped by stock and the per-order maximum, never
    /// below what the account had) and moves its favourites. Returns the capped lines, or nil when the
    /// guest had nothing.
    private static func moveCartAndFavorites(_ session: PostgresSession, from guest: Shopper, to account: Shopper) async throws -> [CappedLine]? {
        // The guest's cart lock first, as its cart changes take it: the same lock order as theirs.
        try await session.execute("SELECT 1 FROM cart_revision WHERE owner = \(guest.storageKey) FOR UPDATE")
        // Taken and deleted in one statement: a line is merged exactly when it is deleted, whatever else
        // runs beside this transaction.
        let lines = try await session.rows("DELETE FROM cart_line WHERE owner = \(guest.storageKey) RETURNING seq, productId, quantity")
            .map { try $0.decode((Int64, String, Int).self) }
            .sorted { $0.0 < $1.0 }
        let favorites = try await session.value("""
            WITH moved AS (DELETE FROM favorite WHERE owner = \(guest.storageKey) RETURNING seq, productId),
                 kept AS (INSERT INTO favorite (owner, productId) SELECT \(account.storageKey), productId FROM moved ORDER BY seq
                          ON CONFLICT DO NOTHING)
            SELECT COUNT(*) FROM moved
            """, as: Int.self) ?? 0
        guard !lines.isEmpty || favorites > 0 else { return nil }
        try await session.execute("DELETE FROM cart_revision WHERE owner = \(guest.storageKey)")
        guard !lines.isEmpty else { return [] }
        // The account's cart lock first (as every cart change takes it): a change of the account's cart on
        // another server waits, so the quantities read below stay what they are until the commit.
        try await PostgresRows.bumpCartRevision(session, of: account)
        var capped: [CappedLine] = []
        for (_, productId, guestQuantity) in lines {
            guard let product = try await PostgresRows.product(session, id: productId) else { continue }
            let existing = try await session.value(
                "SELECT quantity FROM cart_line WHERE owner = \(account.storageKey) AND productId = \(productId)", as: Int.self) ?? 0
            let (kept, cappedLine) = CartRules.merged(existing: existing, adding: guestQuantity, of: product)
            if let cappedLine { capped.append(cappedLine) }
            guard kept > existing else { continue }
            try await session.execute("""
                INSERT INTO cart_line (owner, productId, quantity) VALUES (\(account.storageKey), \(productId), \(Int64(kept)))
                ON CONFLICT (owner, productId) DO UPDATE SET quantity = excluded.quantity
                """)
        }
        return capped
    }

    /// The first account on a database holding the legacy guest's data (see ``Shopper/legacyGuest``) takes
    /// its cart, favourites and orders. Returns the change-log entry, or nil when there was nothing to take.
    private static func adoptLegacyData(_ session: PostgresSession, into account: Shopper, at now: Date) async throws -> Int64? {
        let legacy = Shopper.legacyGuest.storageKey
        // Nearly always nothing (a PostgreSQL database is created with accounts): three index look-ups
        // spare every registration a count of all accounts.
        guard try await session.value("""
            SELECT EXISTS (SELECT 1 FROM cart_line WHERE owner = \(legacy)) OR EXISTS (SELECT 1 FROM favorite WHERE owner = \(legacy))
                OR EXISTS (SELECT 1 FROM customer_order WHERE owner = \(legacy))
            """, as: Bool.self) == true else { return nil }
        // Two first registrations at once may both count 1 (neither sees the other's account): they then
        // both move the legacy rows, and the row locks serialize that. The second waits on the first row the
        // first one moved (an order, the cart's revision, a line or a favourite), then finds them all moved
        // and takes nothing: the data goes to one account, whole.
        guard try await session.value("SELECT COUNT(*) FROM account", as: Int.self) == 1 else { return nil }
        let orders = try await session.execute(
            "UPDATE customer_order SET owner = \(account.storageKey) WHERE owner = \(legacy) RETURNING 1")
        let moved = try await moveCartAndFavorites(session, from: .legacyGuest, to: account)
        guard moved != nil || orders > 0 else { return nil }
        return try await PostgresChangeLog.append(session, .shopper, account.storageKey, at: now)
    }

    /// Stores a new session of an account (its token only as a digest).
    private static func insertSession(_ session: PostgresSession, _ newSession: NewSession, accountId: Int64) async throws {
        try await session.execute("""
            INSERT INTO account_session (id, tokenDigest, accountId, createdAt, expiresAt)
            VALUES (\(newSession.id), \(newSession.token.digest), \(accountId), \(StoredDate.milliseconds(newSession.createdAt)),
                    \(StoredDate.milliseconds(newSession.expiresAt)))
            """)
    }

    // MARK: Locking out guessing

    /// The times of `email`'s failed sign-ins that still count at `now`, oldest first.
    private static func recentFailures(_ session: PostgresSession, email: String, now: Date) async throws -> [Int64] {
        try await session.rows("""
            SELECT at FROM sign_in_failure WHERE lower(email) = lower(\(email)) AND at > \(SignInLock.windowStart(now: now)) ORDER BY at
            """).map { try $0.decode(Int64.self) }
    }
}
