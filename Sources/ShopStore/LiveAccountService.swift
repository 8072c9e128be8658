import Credentials
import Foundation
import GRDB
import Shop

/// Accounts over the shop database: passwords stored only as Argon2id hashes (``PasswordHasher``), session
/// tokens only as SHA-256 digests, failed sign-ins counted per email in the database (so every server on
/// the file enforces one lock).
///
/// Hashing runs off the caller's executor (about 70 ms of CPU and 64 MiB each, by design), at most two at
/// once per process (``HashingGate``): the server keeps answering other requests meanwhile.
struct LiveAccountService: AccountService {
    let database: ShopDatabase
    let feed: ChangeFeed
    let hasher: PasswordHasher
    let now: @Sendable () -> Date
    let gate: HashingGate

    // MARK: Registration and sign-in

    func register(email: String, password: String) async throws -> AccountSession {
        let email = try CredentialChecks.registration(email: email, password: password)
        // Hashed before the email is looked up: a registration is how an email's existence can be learnt
        // (the issue wants a taken email named), so each try costs what a sign-in attempt does.
        let hash = try await gate.run { [hasher] in try hasher.hash(password) }
        let now = now()
        let newSession = NewSession(at: now)
        let (account, seq) = try await StorageError.mapping {
            try await database.write { db -> (Account, Int64?) in
                // Checked again in the write: another server may have registered the email meanwhile.
                guard try !AccountRows.emailTaken(db, email) else { throw ShopError.emailTaken(email) }
                try db.execute(sql: """
                    INSERT INTO account (email, passwordHash, name, bio, notificationsEnabled, createdAt) VALUES (?, ?, ?, '', 1, ?)
                    """, arguments: [email, hash, AccountRules.defaultName(forEmail: email), StoredDate.milliseconds(now)])
                let id = db.lastInsertedRowID
                try AccountRows.insertSession(db, newSession, accountId: id)
                let seq = try Self.adoptLegacyData(db, into: Shopper.account(id), at: now)
                return (try AccountRows.account(db, id: id)!, seq)
            }
        }
        if let seq { await feed.committed(seq, [.shopperDataChanged(account.shopper)]) }
        return newSession.signedIn(account)
    }

    func signIn(email: String, password: String) async throws -> AccountSession {
        // Malformed input is refused before anything is read or stored (it names no account).
        let email = try CredentialChecks.signIn(email: email, password: password)
        let now = now()
        // The attempt is counted as a failure before the password is checked, in the transaction that
        // checks the lock: attempts sent in parallel cannot pass the lock by all reading it before any
        // failed. A success removes the count.
        let stored = try await StorageError.mapping {
            try await database.write { db -> (id: Int64, hash: String)? in
                try db.execute(sql: "DELETE FROM sign_in_failure WHERE at < ?", arguments: [SignInLock.windowStart(now: now)])
                try SignInLock.check(failures: Self.recentFailures(db, email: email, now: now), now: now)
                try db.execute(sql: "INSERT INTO sign_in_failure (email, at) VALUES (?, ?)", arguments: [email, StoredDate.milliseconds(now)])
                return try Row.fetchOne(db, sql: "SELECT id, passwordHash FROM account WHERE email = ?", arguments: [email]).map { ($0[0], $0[1]) }
            }
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
            let failures = try await StorageError.mapping {
                try await database.writer.read { db in try Self.recentFailures(db, email: email, now: now) }
            }
            try SignInLock.check(failures: failures, now: now)
            throw ShopError.invalidCredentials
        }
        let rehash = hasher.needsRehash(stored.hash) ? try? await gate.run { [hasher] in try hasher.hash(password) } : nil
        let newSession = NewSession(at: now)
        let account = try await StorageError.mapping {
            try await database.write { db -> Account in
                try db.execute(sql: "DELETE FROM sign_in_failure WHERE email = ?", arguments: [email])
                if let rehash { try db.execute(sql: "UPDATE account SET passwordHash = ? WHERE id = ?", arguments: [rehash, stored.id]) }
                try AccountRows.pruneSessions(db, now: now)
                try AccountRows.insertSession(db, newSession, accountId: stored.id)
                guard let account = try AccountRows.account(db, id: stored.id) else { throw ShopError.invalidCredentials }
                return account
            }
        }
        return newSession.signedIn(account)
    }

    func resume(token: String) async throws -> AccountSession {
        guard let parsed = SessionToken(parsing: token) else { throw ShopError.sessionInvalid }
        let now = StoredDate.milliseconds(now())
        let found = try await StorageError.mapping {
            try await database.writer.read { db -> (Account, String, Int64)? in
                guard let row = try Row.fetchOne(db, sql: """
                    SELECT \(AccountRows.columns), s.id, s.expiresAt FROM account_session s JOIN account a ON a.id = s.accountId
                    WHERE s.tokenDigest = ? AND s.endedAt IS NULL AND s.expiresAt > ?
                    """, arguments: [parsed.digest, now])
                else { return nil }
                return (AccountRows.account(row), row[6], row[7])
            }
        }
        guard let (account, sessionId, expiresAt) = found else { throw ShopError.sessionInvalid }
        return AccountSession(
            account: account, sessionId: sessionId, token: parsed.value, expiresAt: StoredDate.date(expiresAt), isNew: false)
    }

    func signOut(sessionId: String) async throws {
        let now = now()
        let seq = try await StorageError.mapping {
            try await database.write { db -> Int64? in
                try db.execute(sql: "UPDATE account_session SET endedAt = ? WHERE id = ? AND endedAt IS NULL",
                               arguments: [StoredDate.milliseconds(now), sessionId])
                guard db.changesCount > 0 else { return nil }
                return try ChangeLog.append(db, .sessionEnded, sessionId, at: now)
            }
        }
        if let seq { await feed.committed(seq, [.sessionEnded(sessionId: sessionId)]) }
    }

    func activeAccount(sessionId: String) async throws -> Account? {
        let now = StoredDate.milliseconds(now())
        return try await StorageError.mapping {
            try await database.writer.read { db in
                try Row.fetchOne(db, sql: """
                    SELECT \(AccountRows.columns) FROM account_session s JOIN account a ON a.id = s.accountId
                    WHERE s.id = ? AND s.endedAt IS NULL AND s.expiresAt > ?
                    """, arguments: [sessionId, now]).map { AccountRows.account($0) }
            }
        }
    }

    // MARK: Profiles

    func account(id: Int64) async throws -> Account {
        let account = try await StorageError.mapping { try await database.writer.read { db in try AccountRows.account(db, id: id) } }
        guard let account else { throw ShopError.sessionInvalid }
        return account
    }

    func updateProfile(accountId: Int64, _ update: ProfileUpdate) async throws -> Account {
        let errors = AccountRules.errors(for: update)
        guard errors.isEmpty else { throw ShopError.validationFailed(errors) }
        let update = update.normalized
        let key = IdempotencyKey.current
        let sessionId = WritingSession.id
        let now = now()
        let (account, seq) = try await StorageError.mapping {
            try await database.write { db -> (Account, Int64?) in
                try SessionCheck.requireLive(db, sessionId, at: now)
                if case .replay = try IdempotencyRecord.check(db, key) {
                    guard let account = try AccountRows.account(db, id: accountId) else { throw ShopError.sessionInvalid }
                    return (account, nil)
                }
                if let email = update.email, try AccountRows.emailTaken(db, email, except: accountId) { throw ShopError.emailTaken(email) }
                if !update.isEmpty { try AccountRows.updateProfile(db, id: accountId, update) }
                guard let account = try AccountRows.account(db, id: accountId) else { throw ShopError.sessionInvalid }
                try IdempotencyRecord.record(db, key, at: now)
                // An update that sets nothing writes nothing, so there is nothing for other servers to follow.
                guard !update.isEmpty else { return (account, nil) }
                return (account, try ChangeLog.append(db, .account, String(accountId), at: now))
            }
        }
        if let seq { await feed.committed(seq, [.accountChanged(account)]) }
        return account
    }

    // MARK: A guest's data

    func adoptGuest(_ guestId: String, into accountId: Int64) async throws -> GuestAdoption {
        let guest = Shopper.guest(guestId)
        let account = Shopper.account(accountId)
        let now = now()
        let (adoption, seq) = try await StorageError.mapping {
            try await database.commits.write { db -> (GuestAdoption, Int64?) in
                let capped = try Self.moveCartAndFavorites(db, from: guest, to: account)
                guard let capped else { return (GuestAdoption(cart: try StoredRows.cart(db, of: account), capped: []), nil) }
                let seq = try ChangeLog.append(db, .shopper, account.storageKey, at: now)
                return (GuestAdoption(cart: try StoredRows.cart(db, of: account), capped: capped), seq)
            }
        }
        if let seq { await feed.committed(seq, [.shopperDataChanged(account)]) }
        return adoption
    }

    /// Merges `guest`'s cart lines into `account`'s (each capped by stock and the per-order maximum, never
    /// below what the account had) and moves its favourites. Returns the capped lines, or nil when the
    /// guest had nothing.
    private static func moveCartAndFavorites(_ db: Database, from guest: Shopper, to account: Shopper) throws -> [CappedLine]? {
        let lines = try Row.fetchAll(db, sql: "SELECT productId, quantity FROM cart_line WHERE owner = ? ORDER BY seq",
                                     arguments: [guest.storageKey])
        let favorites = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM favorite WHERE owner = ?", arguments: [guest.storageKey]) ?? 0
        guard !lines.isEmpty || favorites > 0 else { return nil }
        var capped: [CappedLine] = []
        for line in lines {
            let productId: String = line[0]
            let guestQuantity: Int = line[1]
            guard let product = try StoredRows.product(db, id: productId) else { continue }
            let existing = try Int.fetchOne(db, sql: "SELECT quantity FROM cart_line WHERE owner = ? AND productId = ?",
                                            arguments: [account.storageKey, productId]) ?? 0
            let (kept, cappedLine) = CartRules.merged(existing: existing, adding: guestQuantity, of: product)
            if let cappedLine { capped.append(cappedLine) }
            guard kept > existing else { continue }
            try db.execute(sql: """
                INSERT INTO cart_line (owner, productId, quantity) VALUES (?, ?, ?)
                ON CONFLICT (owner, productId) DO UPDATE SET quantity = excluded.quantity
                """, arguments: [account.storageKey, productId, kept])
        }
        try db.execute(sql: "DELETE FROM cart_line WHERE owner = ?", arguments: [guest.storageKey])
        try db.execute(sql: "DELETE FROM cart_revision WHERE owner = ?", arguments: [guest.storageKey])
        try db.execute(sql: """
            INSERT OR IGNORE INTO favorite (owner, productId) SELECT ?, productId FROM favorite WHERE owner = ? ORDER BY seq
            """, arguments: [account.storageKey, guest.storageKey])
        try db.execute(sql: "DELETE FROM favorite WHERE owner = ?", arguments: [guest.storageKey])
        if !lines.isEmpty { try StoredRows.bumpCartRevision(db, of: account) }
        return capped
    }

    /// The first account on a database from before accounts takes the legacy guest's cart, favourites and
    /// orders. Returns the change-log entry, or nil when there was nothing to take.
    private static func adoptLegacyData(_ db: Database, into account: Shopper, at now: Date) throws -> Int64? {
        guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM account") == 1 else { return nil }
        let legacy = Shopper.legacyGuest.storageKey
        try db.execute(sql: "UPDATE customer_order SET owner = ? WHERE owner = ?", arguments: [account.storageKey, legacy])
        let orders = db.changesCount
        let moved = try moveCartAndFavorites(db, from: .legacyGuest, to: account)
        guard moved != nil || orders > 0 else { return nil }
        return try ChangeLog.append(db, .shopper, account.storageKey, at: now)
    }

    // MARK: Locking out guessing

    /// The times of `email`'s failed sign-ins that still count at `now`, oldest first.
    private static func recentFailures(_ db: Database, email: String, now: Date) throws -> [Int64] {
        try Int64.fetchAll(db, sql: "SELECT at FROM sign_in_failure WHERE email = ? AND at > ? ORDER BY at",
                           arguments: [email, SignInLock.windowStart(now: now)])
    }
}
