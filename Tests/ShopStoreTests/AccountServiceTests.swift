import Credentials
import Foundation
import GRDB
import Shop
import Testing
@testable import ShopStore

/// A date the test moves.
final class MovableNow: Sendable {
    private let date = Locked(fixedNow)
    var now: Date { date.withLock { $0 } }
    func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

extension ShopServices {
    /// Live services whose "now" a test moves (sign-in locks and token expiry), with the cheapest hash.
    static func testing(_ database: ShopDatabase, now: MovableNow, events: ShopEvents = ShopEvents()) -> ShopServices {
        .live(database: database, events: events, now: { now.now }, hasher: PasswordHasher(cost: .minimum))
    }
}

/// Accounts over the store: credentials, sessions, sign-in locks, and each account's own data.
@Suite @MainActor struct AccountServiceTests {
    let database: ShopDatabase
    let now = MovableNow()
    let services: ShopServices

    init() throws {
        database = try ShopDatabase(path: ":memory:")
        services = ShopServices.testing(database, now: now)
    }

    @Test func registeringStoresOnlyASaltedArgon2idHashAndSignsIn() async throws {
        let session = try await services.accounts.register(email: "  Ann@Example.com ", password: "secret123")
        #expect(session.account.email == "Ann@Example.com")
        #expect(session.account.name == "Ann")
        #expect(SessionToken(parsing: session.token) != nil)
        let (hash, digests) = try await database.writer.read { db in
            (try String.fetchOne(db, sql: "SELECT passwordHash FROM account")!, try String.fetchAll(db, sql: "SELECT tokenDigest FROM account_session"))
        }
        #expect(hash.hasPrefix("$argon2id$"))
        #expect(!hash.contains("secret123"))
        #expect(digests == [SessionToken(parsing: session.token)!.digest])  // the token itself is not stored
        let dump = try await database.writer.read { db in
            try String.fetchAll(db, sql: "SELECT email || passwordHash || name || bio FROM account").joined()
                + String.fetchAll(db, sql: "SELECT id || tokenDigest FROM account_session").joined()
        }
        #expect(!dump.contains("secret123") && !dump.contains(session.token))
    }

    @Test func anEmailIsRegisteredOnceWhateverItsCase() async throws {
        _ = try await services.accounts.register(email: "ann@example.com", password: "secret123")
        let error = await #expect(throws: ShopError.self) {
            try await services.accounts.register(email: "ANN@example.COM", password: "other1234")
        }
        #expect(error?.reason == "emailTaken")
    }

    @Test(arguments: [
        ("not-an-email", "secret123", "email"), ("ann@example.com", "short1", "password"),
        ("ann@example.com", "nodigitshere", "password"), (String(repeating: "a", count: 10_000) + "@example.com", "secret123", "email"),
        ("ann\u{0}@example.com", "secret123", "email"), ("'; DROP TABLE account; --@x.io", "secret123", "email"),
        ("a" + String(repeating: "\u{301}", count: 10_000) + "@example.com", "secret123", "email"),
        (#"{"email":"a@b.cc"}"#, "secret123", "email"), ("admin@example.com'--", "secret123", "email"),
        ("<script>@x.io", "secret123", "email"), ("robert');DROP/**/TABLE/**/accounts;--@example.com", "secret123", "email"),
    ])
    func invalidRegistrationsAreRefusedByFieldAndStoreNothing(email: String, password: String, field: String) async throws {
        let error = await #expect(throws: ShopError.self) { try await services.accounts.register(email: email, password: password) }
        #expect(error?.reason == "validationFailed")
        #expect(error?.details[field] != nil)
        #expect(try await database.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM account") } == 0)
    }

    @Test func aWrongPasswordAndAnUnknownEmailGetTheSameAnswer() async throws {
        _ = try await services.accounts.register(email: "ann@example.com", password: "secret123")
        let wrongPassword = await #expect(throws: ShopError.self) { try await services.accounts.signIn(email: "ann@example.com", password: "secret124") }
        let unknownEmail = await #expect(throws: ShopError.self) { try await services.accounts.signIn(email: "bob@example.com", password: "secret123") }
        #expect(wrongPassword == .invalidCredentials)
        #expect(unknownEmail == .invalidCredentials)
        let session = try await services.accounts.signIn(email: "ANN@example.com", password: "secret123")
        #expect(session.account.email == "ann@example.com")
    }

    @Test func fiveFailuresWithinFifteenMinutesLockTheEmailForAGrowingDelay() async throws {
        _ = try await services.accounts.register(email: "ann@example.com", password: "secret123")
        for _ in 1...4 {
            await #expect(throws: ShopError.invalidCredentials) { try await services.accounts.signIn(email: "ann@example.com", password: "wrong1234") }
            now.advance(by: 10)
        }
        let fifth = await #expect(throws: ShopError.self) { try await services.accounts.signIn(email: "ann@example.com", password: "wrong1234") }
        #expect(fifth?.reason == "signInLocked")
        #expect(fifth?.details["retryAfter"] == "60")
        // Locked: even the right password is refused, without being checked.
        now.advance(by: 30)
        let locked = await #expect(throws: ShopError.self) { try await services.accounts.signIn(email: "ann@example.com", password: "secret123") }
        #expect(locked?.reason == "signInLocked")
        #expect(locked?.details["retryAfter"] == "30")
        // After the minute, a sixth failure locks for two.
        now.advance(by: 31)
        let sixth = await #expect(throws: ShopError.self) { try await services.accounts.signIn(email: "ann@example.com", password: "wrong1234") }
        #expect(sixth?.details["retryAfter"] == "120")
        // Another email is not locked.
        await #expect(throws: ShopError.invalidCredentials) { try await services.accounts.signIn(email: "bob@example.com", password: "wrong1234") }
        // Once the lock passes, the right password works and clears the count.
        now.advance(by: 121)
        _ = try await services.accounts.signIn(email: "ann@example.com", password: "secret123")
        await #expect(throws: ShopError.invalidCredentials) { try await services.accounts.signIn(email: "ann@example.com", password: "wrong1234") }
    }

    @Test func attemptsSentInParallelCannotPassTheLock() async throws {
        _ = try await services.accounts.register(email: "ann@example.com", password: "secret123")
        let accounts = services.accounts
        let answers = await withTaskGroup(of: String.self) { group in
            for _ in 1...12 {
                group.addTask {
                    do {
                        _ = try await accounts.signIn(email: "ann@example.com", password: "wrong1234")
                        return "signedIn"
                    } catch let error as ShopError {
                        return error.reason
                    } catch {
                        return "\(error)"
                    }
                }
            }
            var answers: [String] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
        // Each attempt is counted before its password is checked: only five are ever checked.
        let counted = try await database.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sign_in_failure") }
        #expect(counted == 5)
        #expect(answers.filter { $0 == "signInLocked" }.count >= 8)
        #expect(Set(answers).isSubset(of: ["invalidCredentials", "signInLocked"]))
        await #expect(throws: ShopError.self) { try await services.accounts.signIn(email: "ann@example.com", password: "secret123") }
    }

    @Test func failuresOlderThanFifteenMinutesDoNotCount() async throws {
        _ = try await services.accounts.register(email: "ann@example.com", password: "secret123")
        for _ in 1...4 {
            await #expect(throws: ShopError.invalidCredentials) { try await services.accounts.signIn(email: "ann@example.com", password: "wrong1234") }
        }
        now.advance(by: 15 * 60 + 1)
        await #expect(throws: ShopError.invalidCredentials) { try await services.accounts.signIn(email: "ann@example.com", password: "wrong1234") }
    }

    @Test func aTokenResumesItsSessionUntilItExpiresOrIsSignedOut() async throws {
        let first = try await services.accounts.register(email: "ann@example.com", password: "secret123")
        let resumed = try await services.accounts.resume(token: first.token)
        #expect(resumed.account == first.account)
        #expect(resumed.sessionId == first.sessionId)

        // Forged: the right shape, not issued; malformed; huge.
        for forged in [SessionToken.generate().value, "sft_" + String(repeating: "A", count: 43), "token", String(repeating: "x", count: 10_000), ""] {
            await #expect(throws: ShopError.sessionInvalid) { try await services.accounts.resume(token: forged) }
        }
        // Signed out: the token stops working.
        let second = try await services.accounts.signIn(email: "ann@example.com", password: "secret123")
        try await services.accounts.signOut(sessionId: second.sessionId)
        await #expect(throws: ShopError.sessionInvalid) { try await services.accounts.resume(token: second.token) }
        // Expired: 30 days after sign-in.
        now.advance(by: 30 * 24 * 3600 + 1)
        await #expect(throws: ShopError.sessionInvalid) { try await services.accounts.resume(token: first.token) }
    }

    @Test func eachAccountSeesAndChangesOnlyItsOwnCartFavouritesAndOrders() async throws {
        let ann = try await services.accounts.register(email: "ann@example.com", password: "secret123").account.shopper
        let bob = try await services.accounts.register(email: "bob@example.com", password: "secret123").account.shopper
        let annCart = try await services.cart.add(productId: "p-0001", quantity: 2, for: ann)
        try await services.favorites.setFavorite(productId: "p-0003", isFavorite: true, for: ann)
        _ = try await services.orders.placeOrder(expectedRevision: annCart.revision, for: ann)
        _ = try await services.cart.add(productId: "p-0002", quantity: 1, for: ann)

        #expect(try await services.cart.cart(of: bob).isEmpty)
        #expect(try await services.favorites.isFavorite(productId: "p-0003", for: bob) == false)
        #expect(try await services.orders.recentOrders(limit: 5, of: bob).isEmpty)
        // Bob naming Ann's lines changes nothing of hers.
        await #expect(throws: ShopError.notInCart("p-0002")) { try await services.cart.remove(productId: "p-0002", for: bob) }
        await #expect(throws: ShopError.notInCart("p-0002")) { try await services.cart.setQuantity(productId: "p-0002", quantity: 5, for: bob) }
        _ = try await services.cart.clear(for: bob)
        await #expect(throws: ShopError.emptyCart) { try await services.orders.placeOrder(expectedRevision: nil, for: bob) }
        #expect(try await services.cart.cart(of: ann).lines.map(\.productId) == ["p-0002"])
        #expect(try await services.orders.recentOrders(limit: 5, of: ann).count == 1)
    }

    @Test func signingInMergesTheGuestCartCappedByStockAndTheMaximumAndMovesFavourites() async throws {
        let ann = try await services.accounts.register(email: "ann@example.com", password: "secret123").account
        let guest = "guest-1"
        let product = try await services.catalog.product(id: "p-0001")
        let limit = min(product.stock, product.maxPerOrder)
        _ = try await services.cart.add(productId: "p-0001", quantity: limit - 1, for: ann.shopper)
        _ = try await services.cart.add(productId: "p-0001", quantity: 2, for: .guest(guest))
        _ = try await services.cart.add(productId: "p-0002", quantity: 1, for: .guest(guest))
        try await services.favorites.setFavorite(productId: "p-0004", isFavorite: true, for: .guest(guest))

        let adoption = try await services.accounts.adoptGuest(guest, into: ann.id)
        #expect(adoption.capped == [CappedLine(productId: "p-0001", name: product.name, requested: limit + 1, kept: limit)])
        #expect(adoption.cart.lines.map { [$0.productId: $0.quantity] } == [["p-0001": limit], ["p-0002": 1]])
        #expect(try await services.cart.cart(of: .guest(guest)).isEmpty)
        #expect(try await services.favorites.isFavorite(productId: "p-0004", for: ann.shopper))
        #expect(try await services.favorites.isFavorite(productId: "p-0004", for: .guest(guest)) == false)
    }

    @Test func aProfileSaveIsValidatedStoredAndPublished() async throws {
        let events = ShopEvents()
        let services = ShopServices.testing(database, now: now, events: events)
        let ann = try await services.accounts.register(email: "ann@example.com", password: "secret123").account
        _ = try await services.accounts.register(email: "bob@example.com", password: "secret123")
        let recorder = EventRecorder(events)
        let update = ProfileUpdate(name: "Ann Smith", email: "ann.smith@example.com", bio: "Reads.\nWrites.", notificationsEnabled: false)
        let saved = try await services.accounts.updateProfile(accountId: ann.id, update)
        #expect(recorder.events == [.accountChanged(saved)])
        #expect(try await services.accounts.account(id: ann.id) == saved)
        await #expect(throws: ShopError.emailTaken("BOB@example.com")) {
            try await services.accounts.updateProfile(accountId: ann.id, ProfileUpdate(name: "Ann", email: "BOB@example.com", bio: "", notificationsEnabled: true))
        }
        let invalid = await #expect(throws: ShopError.self) {
            try await services.accounts.updateProfile(
                accountId: ann.id, ProfileUpdate(name: String(repeating: "n", count: 10_000), email: "x", bio: String(repeating: "b", count: 501), notificationsEnabled: true))
        }
        #expect(Set(invalid?.details.keys.map { $0 } ?? []) == ["name", "email", "bio"])
        #expect(try await services.accounts.account(id: ann.id) == saved)
    }

    @Test func aProfileSaveStoresOnlyTheFieldsItSetsAndKeepsTheOthersAsStored() async throws {
        let events = ShopEvents()
        let services = ShopServices.testing(database, now: now, events: events)
        let ann = try await services.accounts.register(email: "ann@example.com", password: "secret123").account
        let recorder = EventRecorder(events)

        // One screen saves the bio and the switch; another, which loaded the profile before, then saves only
        // the name it changed: the bio and the switch stay as the first save stored them.
        let first = try await services.accounts.updateProfile(accountId: ann.id, ProfileUpdate(bio: "Reads.", notificationsEnabled: false))
        let second = try await services.accounts.updateProfile(accountId: ann.id, ProfileUpdate(name: " Ann Smith "))

        var expected = ann
        expected.bio = "Reads."
        expected.notificationsEnabled = false
        #expect(first == expected)
        expected.name = "Ann Smith"
        #expect(second == expected)
        #expect(try await services.accounts.account(id: ann.id) == expected)
        #expect(recorder.events == [.accountChanged(first), .accountChanged(second)])
        // Only the fields an update sets are checked: a valid name alone is not refused for anything else.
        let invalid = await #expect(throws: ShopError.self) {
            try await services.accounts.updateProfile(accountId: ann.id, ProfileUpdate(bio: String(repeating: "b", count: 501)))
        }
        #expect(invalid?.details.keys.sorted() == ["bio"])
    }

    @Test func aProfileSaveThatSetsNothingWritesNothingAndAnswersTheStoredAccount() async throws {
        let events = ShopEvents()
        let services = ShopServices.testing(database, now: now, events: events)
        let ann = try await services.accounts.register(email: "ann@example.com", password: "secret123").account
        let logged = { [database] in try await database.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM change_log") } }
        let entriesBefore = try await logged()
        let recorder = EventRecorder(events)

        #expect(try await services.accounts.updateProfile(accountId: ann.id, ProfileUpdate()) == ann)

        #expect(try await logged() == entriesBefore)
        #expect(recorder.events.isEmpty)
        await #expect(throws: ShopError.sessionInvalid) { try await services.accounts.updateProfile(accountId: 999, ProfileUpdate()) }
    }

    @Test func aDatabaseFromBeforeAccountsKeepsItsDataForTheFirstAccount() async throws {
        // A database at the previous schema, with one cart line, a favourite and an order.
        let queue = try DatabaseQueue(configuration: ShopDatabase.configuration)
        try ShopSchema.migrator.migrate(queue, upTo: "v2-change-log")
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO cart_line (productId, quantity) VALUES ('p-0001', 2);
                UPDATE cart_revision SET revision = 7;
                INSERT INTO favorite (productId) VALUES ('p-0002');
                INSERT INTO customer_order (seq, id, createdAt, subtotal, tax, total) VALUES (1, 'o-000001', 0, 100, 10, 110);
                INSERT INTO order_line (orderId, position, productId, name, unitPrice, quantity) VALUES ('o-000001', 0, 'p-0003', 'Old', 100, 1);
                """)
        }
        let database = ShopDatabase(path: ":memory:", writer: queue)
        try database.migrate()
        let services = ShopServices.testing(database, now: now)
        // Nothing lost: the legacy guest holds it until the first account registers.
        #expect(try await services.cart.cart(of: .legacyGuest).lines.map(\.quantity) == [2])
        #expect(try await services.cart.cart(of: .legacyGuest).revision == 7)
        #expect(try await services.orders.recentOrders(limit: 5, of: .legacyGuest).map(\.id) == ["o-000001"])

        let first = try await services.accounts.register(email: "ann@example.com", password: "secret123").account.shopper
        #expect(try await services.cart.cart(of: first).lines.map(\.productId) == ["p-0001"])
        #expect(try await services.favorites.isFavorite(productId: "p-0002", for: first))
        #expect(try await services.orders.recentOrders(limit: 5, of: first).map(\.id) == ["o-000001"])
        #expect(try await services.cart.cart(of: .legacyGuest).isEmpty)

        let second = try await services.accounts.register(email: "bob@example.com", password: "secret123").account.shopper
        #expect(try await services.cart.cart(of: second).isEmpty)
        #expect(try await services.orders.recentOrders(limit: 5, of: second).isEmpty)
    }
}
