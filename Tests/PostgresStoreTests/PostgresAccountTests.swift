import Credentials
import Foundation
import Logging
import PostgresNIO
@testable import PostgresStore
import Shop
@testable import ShopStore
import Testing

/// Accounts over PostgreSQL: credentials, the sign-in lock, sessions, profiles and a guest's data, and
/// what several servers on one database do at once (one email registered twice, parallel sign-in attempts).
@Suite(.enabled(if: TestPostgres.isAvailable, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster to test against (scripts/test.sh starts one)")) @MainActor
struct PostgresAccountTests {
    let now = PostgresTestNow()

    @Test func registeringStoresOnlyAHashAndATokenDigestAndSignsIn() async throws {
        let server = try await PostgresTestServer(now: now)
        let session = try await server.accounts.register(email: "  Ann@Example.com ", password: "secret123")

        #expect(session.account == Account(
            id: session.account.id, email: "Ann@Example.com", name: "Ann", bio: "", notificationsEnabled: true, createdAt: now.now))
        #expect(session.isNew)
        let stored = try await server.database.read { session in
            try await session.rows("SELECT passwordHash FROM account").map { try $0.decode(String.self) }
                + session.rows("SELECT tokenDigest FROM account_session").map { try $0.decode(String.self) }
        }
        #expect(stored.count == 2)
        #expect(stored[0].hasPrefix("$argon2id$") && !stored[0].contains("secret123"))
        #expect(stored[1] == SessionToken(parsing: session.token)?.digest)
        #expect(try await server.accounts.activeAccount(sessionId: session.sessionId) == session.account)
    }

    @Test func anEmailIsRegisteredOnceWhateverItsCase() async throws {
        let server = try await PostgresTestServer(now: now)
        _ = try await server.accounts.register(email: "ann@example.com", password: "secret123")
        await #expect(throws: ShopError.emailTaken("ANN@example.COM")) {
            try await server.accounts.register(email: "ANN@example.COM", password: "other1234")
        }
        let invalid = await #expect(throws: ShopError.self) { try await server.accounts.register(email: "not-an-email", password: "short") }
        #expect(invalid?.reason == "validationFailed")
        #expect(Set(invalid?.details.keys.map { $0 } ?? []) == ["email", "password"])
        #expect(try await server.count("account") == 1)
    }

    @Test func oneEmailRegisteredByTwoServersAtOnceHasOneAccount() async throws {
        let first = try await PostgresTestServer(now: now)
        let second = try await PostgresTestServer(sharing: first.database, now: now)
        let answers = await withTaskGroup(of: String.self) { group in
            for attempt in 0..<8 {
                let accounts = attempt.isMultiple(of: 2) ? first.accounts : second.accounts
                let email = attempt.isMultiple(of: 2) ? "ann@example.com" : "ANN@example.com"
                group.addTask { await Self.answer { _ = try await accounts.register(email: email, password: "secret123") } }
            }
            var answers: [String] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
        #expect(answers.sorted() == Array(repeating: "emailTaken", count: 7) + ["ok"])
        #expect(try await first.count("account") == 1)
    }

    @Test func aRegistrationWaitingOnAnotherServersUncommittedOneIsToldTheEmailIsTaken() async throws {
        let server = try await PostgresTestServer(now: now)
        // Another server's registration, inserted and not yet committed.
        let other = try await PostgresTestConnection(server.database.url)
        try await other.execute("BEGIN")
        try await other.execute("""
            INSERT INTO account (email, passwordHash, name, createdAt) VALUES ('Ann@example.com', 'x', 'Ann', 0)
            """)
        let registering = Task { [accounts = server.accounts] in
            await Self.answer { _ = try await accounts.register(email: "ann@example.com", password: "secret123") }
        }
        // The registration waits on the unique index until the other transaction ends.
        try await other.waitForLockWaiters(1)
        try await other.execute("COMMIT")
        #expect(await registering.value == "emailTaken")
        #expect(try await server.count("account") == 1)
        try await other.close()
    }

    @Test func aWrongPasswordAndAnUnknownEmailGetTheSameAnswer() async throws {
        let server = try await PostgresTestServer(now: now)
        _ = try await server.accounts.register(email: "ann@example.com", password: "secret123")
        await #expect(throws: ShopError.invalidCredentials) { try await server.accounts.signIn(email: "ann@example.com", password: "secret124") }
        await #expect(throws: ShopError.invalidCredentials) { try await server.accounts.signIn(email: "bob@example.com", password: "secret123") }
        let session = try await server.accounts.signIn(email: "ANN@example.com", password: "secret123")
        #expect(session.account.email == "ann@example.com")
        // A success clears the email's count (and only its).
        #expect(try await server.count("sign_in_failure WHERE email = 'ann@example.com'") == 0)
        #expect(try await server.count("sign_in_failure") == 1)
    }

    @Test func fiveFailuresWithinFifteenMinutesLockTheEmailForAGrowingDelay() async throws {
        let server = try await PostgresTestServer(now: now)
        let accounts = server.accounts
        _ = try await accounts.register(email: "ann@example.com", password: "secret123")
        for _ in 1...4 {
            await #expect(throws: ShopError.invalidCredentials) { try await accounts.signIn(email: "ann@example.com", password: "wrong1234") }
            now.advance(by: 10)
        }
        let fifth = await #expect(throws: ShopError.self) { try await accounts.signIn(email: "Ann@example.com", password: "wrong1234") }
        #expect(fifth?.reason == "signInLocked")
        #expect(fifth?.details["retryAfter"] == "60")
        // Locked: even the right password is refused.
        now.advance(by: 30)
        let locked = await #expect(throws: ShopError.self) { try await accounts.signIn(email: "ann@example.com", password: "secret123") }
        #expect(locked?.details["retryAfter"] == "30")
        // After the minute, a sixth failure locks for two.
        now.advance(by: 31)
        let sixth = await #expect(throws: ShopError.self) { try await accounts.signIn(email: "ann@example.com", password: "wrong1234") }
        #expect(sixth?.details["retryAfter"] == "120")
        // Another email is not locked.
        await #expect(throws: ShopError.invalidCredentials) { try await accounts.signIn(email: "bob@example.com", password: "wrong1234") }
        // Once the lock passes, the right password works and clears the count.
        now.advance(by: 121)
        _ = try await accounts.signIn(email: "ann@example.com", password: "secret123")
        await #expect(throws: ShopError.invalidCredentials) { try await accounts.signIn(email: "ann@example.com", password: "wrong1234") }
        // Failures older than the window are forgotten.
        now.advance(by: 15 * 60 + 1)
        for _ in 1...4 {
            await #expect(throws: ShopError.invalidCredentials) { try await accounts.signIn(email: "ann@example.com", password: "wrong1234") }
        }
    }

    @Test func attemptsSentInParallelToTwoServersCannotPassTheLock() async throws {
        let first = try await PostgresTestServer(now: now)
        let second = try await PostgresTestServer(sharing: first.database, now: now)
        _ = try await first.accounts.register(email: "ann@example.com", password: "secret123")
        let answers = await withTaskGroup(of: String.self) { group in
            for attempt in 0..<12 {
                let accounts = attempt.isMultiple(of: 2) ? first.accounts : second.accounts
                group.addTask { await Self.answer { _ = try await accounts.signIn(email: "ann@example.com", password: "wrong1234") } }
            }
            var answers: [String] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
        // Each attempt is counted before its password is checked, one at a time per email: only five are
        // ever checked.
        #expect(try await first.count("sign_in_failure") == 5)
        #expect(answers.filter { $0 == "signInLocked" }.count >= 7)
        #expect(Set(answers).isSubset(of: ["invalidCredentials", "signInLocked"]))
    }

    @Test func aTokenResumesItsSessionOnAnyServerUntilItExpiresOrIsSignedOut() async throws {
        let first = try await PostgresTestServer(now: now)
        let second = try await PostgresTestServer(sharing: first.database, now: now)
        let registered = try await first.accounts.register(email: "ann@example.com", password: "secret123")
        let resumed = try await second.accounts.resume(token: registered.token)
        #expect(resumed == AccountSession(
            account: registered.account, sessionId: registered.sessionId, token: registered.token,
            expiresAt: registered.expiresAt, isNew: false))
        for forged in [SessionToken.generate().value, "sft_" + String(repeating: "A", count: 43), "token", ""] {
            await #expect(throws: ShopError.sessionInvalid) { try await second.accounts.resume(token: forged) }
        }

        // Signed out on one server: the token stops working on both, and the sign-out is published.
        let signedIn = try await first.accounts.signIn(email: "ann@example.com", password: "secret123")
        let recorder = PostgresEventRecorder(first.events)
        try await first.accounts.signOut(sessionId: signedIn.sessionId)
        try await second.accounts.signOut(sessionId: signedIn.sessionId)  // already ended: nothing more
        #expect(recorder.events == [.sessionEnded(sessionId: signedIn.sessionId)])
        #expect(try await first.logged() == [PostgresLogEntry(kind: "sessionEnded", subject: signedIn.sessionId)])
        await #expect(throws: ShopError.sessionInvalid) { try await second.accounts.resume(token: signedIn.token) }
        #expect(try await second.accounts.activeAccount(sessionId: signedIn.sessionId) == nil)
        #expect(try await second.accounts.activeAccount(sessionId: registered.sessionId) == registered.account)

        // Expired: 30 days after sign-in.
        now.advance(by: AccountRules.sessionLifetime + 1)
        await #expect(throws: ShopError.sessionInvalid) { try await first.accounts.resume(token: registered.token) }
        #expect(try await first.accounts.activeAccount(sessionId: registered.sessionId) == nil)
    }

    @Test func aProfileSaveIsValidatedStoredLoggedAndPublished() async throws {
        let server = try await PostgresTestServer(now: now)
        let ann = try await server.accounts.register(email: "ann@example.com", password: "secret123").account
        _ = try await server.accounts.register(email: "bob@example.com", password: "secret123")
        let recorder = PostgresEventRecorder(server.events)
        let update = ProfileUpdate(name: " Ann Smith ", email: "ann.smith@example.com", bio: "Reads.\nWrites.", notificationsEnabled: false)

        let saved = try await server.accounts.updateProfile(accountId: ann.id, update)

        #expect(saved == Account(
            id: ann.id, email: "ann.smith@example.com", name: "Ann Smith", bio: "Reads.\nWrites.", notificationsEnabled: false,
            createdAt: ann.createdAt))
        #expect(recorder.events == [.accountChanged(saved)])
        #expect(try await server.logged() == [PostgresLogEntry(kind: "account", subject: String(ann.id))])
        #expect(try await server.accounts.account(id: ann.id) == saved)
        await #expect(throws: ShopError.emailTaken("BOB@example.com")) {
            try await server.accounts.updateProfile(accountId: ann.id, ProfileUpdate(name: "Ann", email: "BOB@example.com", bio: "", notificationsEnabled: true))
        }
        let invalid = await #expect(throws: ShopError.self) {
            try await server.accounts.updateProfile(
                accountId: ann.id, ProfileUpdate(name: "", email: "x", bio: String(repeating: "b", count: 501), notificationsEnabled: true))
        }
        #expect(Set(invalid?.details.keys.map { $0 } ?? []) == ["name", "email", "bio"])
        // Its own email in another case is not taken.
        let recased = try await server.accounts.updateProfile(
            accountId: ann.id, ProfileUpdate(name: "Ann Smith", email: "Ann.Smith@example.com", bio: "", notificationsEnabled: true))
        #expect(recased.email == "Ann.Smith@example.com")
        await #expect(throws: ShopError.sessionInvalid) {
            try await server.accounts.updateProfile(accountId: 999, ProfileUpdate(name: "No", email: "no@example.com", bio: "", notificationsEnabled: true))
        }
        await #expect(throws: ShopError.sessionInvalid) { try await server.accounts.account(id: 999) }
    }

    @Test func aProfileSaveStoresOnlyTheFieldsItSetsAndKeepsTheOthersAsStored() async throws {
        let first = try await PostgresTestServer(now: now)
        let second = try await PostgresTestServer(sharing: first.database, now: now)
        let ann = try await first.accounts.register(email: "ann@example.com", password: "secret123").account
        let recorder = PostgresEventRecorder(second.events)

        // One server saves the bio and the switch; another, whose screen loaded the profile before, then
        // saves only the name it changed: the bio and the switch stay as the first save stored them.
        _ = try await first.accounts.updateProfile(accountId: ann.id, ProfileUpdate(bio: "Reads.", notificationsEnabled: false))
        let saved = try await second.accounts.updateProfile(accountId: ann.id, ProfileUpdate(name: " Ann Smith "))

        var expected = ann
        expected.name = "Ann Smith"
        expected.bio = "Reads."
        expected.notificationsEnabled = false
        #expect(saved == expected)
        #expect(try await first.accounts.account(id: ann.id) == expected)
        // (The second server also publishes the first's entry, read on its way to its own.)
        #expect(recorder.events.last == .accountChanged(saved))
        let invalid = await #expect(throws: ShopError.self) {
            try await second.accounts.updateProfile(accountId: ann.id, ProfileUpdate(bio: String(repeating: "b", count: 501)))
        }
        #expect(invalid?.details.keys.sorted() == ["bio"])
    }

    @Test func aProfileSaveWaitingOnAnotherServersUncommittedSaveKeepsWhatThatOneStored() async throws {
        let server = try await PostgresTestServer(now: now)
        let ann = try await server.accounts.register(email: "ann@example.com", password: "secret123").account
        // Another server's save of the bio, made and not yet committed: it holds the account's row.
        let other = try await PostgresTestConnection(server.database.url)
        try await other.execute("BEGIN")
        try await other.execute("UPDATE account SET bio = 'Reads.', notificationsEnabled = false WHERE id = \(ann.id)")
        let saving = Task { [accounts = server.accounts] in try await accounts.updateProfile(accountId: ann.id, ProfileUpdate(name: "Ann Smith")) }
        try await other.waitForLockWaiters(1)
        try await other.execute("COMMIT")

        var expected = ann
        expected.name = "Ann Smith"
        expected.bio = "Reads."
        expected.notificationsEnabled = false
        #expect(try await saving.value == expected)
        #expect(try await server.accounts.account(id: ann.id) == expected)
        try await other.close()
    }

    @Test func aProfileSaveThatSetsNothingWritesNothingAndAnswersTheStoredAccount() async throws {
        let server = try await PostgresTestServer(now: now)
        let ann = try await server.accounts.register(email: "ann@example.com", password: "secret123").account
        let loggedBefore = try await server.logged()
        let recorder = PostgresEventRecorder(server.events)

        #expect(try await server.accounts.updateProfile(accountId: ann.id, ProfileUpdate()) == ann)

        #expect(try await server.logged() == loggedBefore)
        #expect(recorder.events.isEmpty)
        await #expect(throws: ShopError.sessionInvalid) { try await server.accounts.updateProfile(accountId: 999, ProfileUpdate()) }
    }

    @Test func twoAccountsSavingOneEmailAtOnceOnTwoServersOneGetsIt() async throws {
        let first = try await PostgresTestServer(now: now)
        let second = try await PostgresTestServer(sharing: first.database, now: now)
        let ann = try await first.accounts.register(email: "ann@example.com", password: "secret123").account
        let bob = try await first.accounts.register(email: "bob@example.com", password: "secret123").account
        let answers = await withTaskGroup(of: String.self) { group in
            for (server, account) in [(first, ann), (second, bob)] {
                let accounts = server.accounts
                group.addTask {
                    await Self.answer {
                        _ = try await accounts.updateProfile(
                            accountId: account.id, ProfileUpdate(name: account.name, email: "cy@example.com", bio: "", notificationsEnabled: true))
                    }
                }
            }
            var answers: [String] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
        #expect(answers.sorted() == ["emailTaken", "ok"])
    }

    @Test func signingInMergesTheGuestCartCappedByStockAndTheMaximumAndMovesFavourites() async throws {
        let server = try await PostgresTestServer(now: now)
        let ann = try await server.accounts.register(email: "ann@example.com", password: "secret123").account
        let guest = Shopper.guest("guest-1")
        let product = try #require(try await server.database.read { try await PostgresRows.product($0, id: "p-0001") })
        let limit = min(product.stock, product.maxPerOrder)
        _ = try await server.cart.add(productId: "p-0001", quantity: limit - 1, for: ann.shopper)
        _ = try await server.cart.add(productId: "p-0001", quantity: 2, for: guest)
        _ = try await server.cart.add(productId: "p-0002", quantity: 1, for: guest)
        try await server.favorites.setFavorite(productId: "p-0004", isFavorite: true, for: guest)
        try await server.favorites.setFavorite(productId: "p-0005", isFavorite: true, for: guest)
        try await server.favorites.setFavorite(productId: "p-0005", isFavorite: true, for: ann.shopper)
        let revision = try await server.cart.cart(of: ann.shopper).revision
        let recorder = PostgresEventRecorder(server.events)
        let logged = try await server.logged().count

        let adoption = try await server.accounts.adoptGuest("guest-1", into: ann.id)

        #expect(adoption.capped == [CappedLine(productId: "p-0001", name: product.name, requested: limit + 1, kept: limit)])
        #expect(adoption.cart.lines.map { [$0.productId: $0.quantity] } == [["p-0001": limit], ["p-0002": 1]])
        #expect(adoption.cart.revision == revision + 1)
        #expect(adoption.cart == (try await server.cart.cart(of: ann.shopper)))
        #expect(try await server.cart.cart(of: guest).isEmpty)
        for productId in ["p-0004", "p-0005"] {
            #expect(try await server.favorites.isFavorite(productId: productId, for: ann.shopper))
            #expect(try await server.favorites.isFavorite(productId: productId, for: guest) == false)
        }
        #expect(try await server.count("cart_revision WHERE owner = 'g:guest-1'") == 0)
        #expect(recorder.events == [.shopperDataChanged(ann.shopper)])
        #expect(try await server.logged().dropFirst(logged) == [PostgresLogEntry(kind: "shopper", subject: ann.shopper.storageKey)])

        // A guest with nothing: nothing changes, nothing is logged.
        let again = try await server.accounts.adoptGuest("guest-1", into: ann.id)
        #expect(again == GuestAdoption(cart: adoption.cart, capped: []))
        #expect(try await server.logged().count == logged + 1)
    }

    @Test func theFirstAccountTakesTheLegacyGuestsDataEvenWhenTwoRegisterAtOnce() async throws {
        let first = try await PostgresTestServer(now: now)
        let second = try await PostgresTestServer(sharing: first.database, now: now)
        // What a database from before accounts held, under the legacy guest.
        try await first.database.write { session in
            try await session.execute("INSERT INTO cart_line (owner, productId, quantity) VALUES ('g:legacy', 'p-0001', 2)")
            try await session.execute("INSERT INTO favorite (owner, productId) VALUES ('g:legacy', 'p-0002')")
            try await session.execute("""
                INSERT INTO customer_order (id, createdAt, subtotal, tax, total, owner) VALUES ('o-000001', 0, 100, 10, 110, 'g:legacy')
                """)
        }
        async let ann = first.accounts.register(email: "ann@example.com", password: "secret123")
        async let bob = second.accounts.register(email: "bob@example.com", password: "secret123")
        let shoppers = try await [ann.account.shopper, bob.account.shopper]

        var holdings: [[String]] = []
        for shopper in shoppers {
            let cart = try await first.cart.cart(of: shopper).lines.map(\.productId)
            let favorite = try await first.favorites.isFavorite(productId: "p-0002", for: shopper) ? ["p-0002"] : []
            let orders = try await first.database.read { session in
                try await PostgresRows.orders(session, of: shopper, limit: 5).map(\.id)
            }
            holdings.append(cart + favorite + orders)
        }
        #expect(holdings.sorted { $0.count < $1.count } == [[], ["p-0001", "p-0002", "o-000001"]])
        #expect(try await first.cart.cart(of: .legacyGuest).isEmpty)
    }

    /// What a call answered: "ok" or the reason of the ``ShopError`` it threw.
    nonisolated static func answer(_ body: @Sendable () async throws -> Void) async -> String {
        do {
            try await body()
            return "ok"
        } catch let error as ShopError {
            return error.reason
        } catch {
            return "\(error)"
        }
    }
}
