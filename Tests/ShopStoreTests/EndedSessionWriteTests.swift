import Foundation
import GRDB
import Shop
import Testing
@testable import ShopStore

/// Writes made for a signed-in session (``WritingSession``) check, in their own transaction, that the session
/// is still live in the store: a sign-out made by any server, or the token's expiry, refuses them at once,
/// before this server has heard of it through the change log.
@Suite @MainActor struct EndedSessionWriteTests {
    let database: ShopDatabase
    let now = MovableNow()
    let services: ShopServices

    init() throws {
        database = try ShopDatabase(path: ":memory:")
        services = ShopServices.testing(database, now: now)
    }

    /// An account with a line in its cart, an unread notification (of an order) and a favourite, and the session
    /// that made them.
    private func signedInWithData() async throws -> AccountSession {
        let signedIn = try await services.accounts.register(email: "ann@example.com", password: "secret123")
        let ann = signedIn.account.shopper
        try await WritingSession.$id.withValue(signedIn.sessionId) {
            try await services.cart.add(productId: "p-0001", quantity: 1, for: ann)
            _ = try await services.orders.placeOrder(expectedRevision: nil, for: ann)
            try await services.cart.add(productId: "p-0002", quantity: 1, for: ann)
            try await services.favorites.setFavorite(productId: "p-0003", isFavorite: true, for: ann)
        }
        return signedIn
    }

    /// Every row an account-scoped write could add, change or remove, as text.
    private func storedData() async throws -> [String] {
        try await database.writer.read { db in
            try [
                "SELECT owner, productId, quantity FROM cart_line ORDER BY seq", "SELECT owner, revision FROM cart_revision",
                "SELECT id, owner FROM customer_order", "SELECT owner, productId FROM favorite ORDER BY seq",
                "SELECT name, email, bio, notificationsEnabled FROM account", "SELECT seq, readAt FROM notification",
                "SELECT count(*) FROM change_log", "SELECT count(*) FROM idempotency_key",
            ].flatMap { sql in try Row.fetchAll(db, sql: sql).map(\.description) }
        }
    }

    /// Each account-scoped write the services offer, made for `shopper` in the running task (in an order in which
    /// each succeeds after the one before, for the cart of ``signedInWithData()``).
    private func everyWrite(of shopper: Shopper, email: String) -> [(String, () async throws -> Void)] {
        [
            ("add", { try await services.cart.add(productId: "p-0004", quantity: 1, for: shopper) }),
            ("setQuantity", { try await services.cart.setQuantity(productId: "p-0002", quantity: 1, for: shopper) }),
            ("remove", { try await services.cart.remove(productId: "p-0004", for: shopper) }),
            ("checkout", { _ = try await services.orders.placeOrder(expectedRevision: nil, for: shopper) }),
            ("clear", { try await services.cart.clear(for: shopper) }),
            ("favourite", { try await services.favorites.setFavorite(productId: "p-0005", isFavorite: true, for: shopper) }),
            ("unfavourite", { try await services.favorites.setFavorite(productId: "p-0003", isFavorite: false, for: shopper) }),
            ("profile", {
                _ = try await services.accounts.updateProfile(
                    accountId: shopper.accountId!, ProfileUpdate(name: "Mallory", email: email, bio: "stolen", notificationsEnabled: false))
            }),
            ("markRead", { try await services.notifications.markRead(ids: [InboxNotification.id(seq: 1)], of: shopper) }),
            ("markAllRead", { try await services.notifications.markAllRead(of: shopper) }),
        ]
    }

    @Test func aSessionSignedOutInTheStoreWritesNothingForItsAccount() async throws {
        let signedIn = try await signedInWithData()
        // Another server signs the session out: this one has not heard of it.
        try await services.accounts.signOut(sessionId: signedIn.sessionId)
        let before = try await storedData()
        for (name, write) in everyWrite(of: signedIn.account.shopper, email: signedIn.account.email) {
            await #expect(throws: ShopError.sessionEnded, "\(name)") {
                try await WritingSession.$id.withValue(signedIn.sessionId) { try await write() }
            }
        }
        #expect(try await storedData() == before)
    }

    @Test func anExpiredSessionWritesNothingForItsAccount() async throws {
        let signedIn = try await signedInWithData()
        now.advance(by: 30 * 24 * 3600 + 1)
        let before = try await storedData()
        for (name, write) in everyWrite(of: signedIn.account.shopper, email: signedIn.account.email) {
            await #expect(throws: ShopError.sessionEnded, "\(name)") {
                try await WritingSession.$id.withValue(signedIn.sessionId) { try await write() }
            }
        }
        #expect(try await storedData() == before)
    }

    @Test func aKeyedRetryOfAChangeStoredBeforeTheSignOutIsRefusedToo() async throws {
        let signedIn = try await services.accounts.register(email: "ann@example.com", password: "secret123")
        let key = IdempotencyKey(key: "k1", fingerprint: "cart/add p-0001")
        let add = { try await services.cart.add(productId: "p-0001", quantity: 1, for: signedIn.account.shopper) }
        try await IdempotencyKey.$current.withValue(key) { try await WritingSession.$id.withValue(signedIn.sessionId) { try await add() } }
        try await services.accounts.signOut(sessionId: signedIn.sessionId)
        await #expect(throws: ShopError.sessionEnded) {
            try await IdempotencyKey.$current.withValue(key) { try await WritingSession.$id.withValue(signedIn.sessionId) { try await add() } }
        }
    }

    @Test func aLiveSessionsWritesAndAGuestsAreStoredAsBefore() async throws {
        let signedIn = try await signedInWithData()
        // Another session of the account signs out: this one stays live.
        let other = try await services.accounts.signIn(email: "ann@example.com", password: "secret123")
        try await services.accounts.signOut(sessionId: other.sessionId)
        for (name, write) in everyWrite(of: signedIn.account.shopper, email: signedIn.account.email) {
            await #expect(throws: Never.self, "\(name)") { try await WritingSession.$id.withValue(signedIn.sessionId) { try await write() } }
        }
        let guest = Shopper.guest("g1")
        let cart = try await services.cart.add(productId: "p-0001", quantity: 1, for: guest)
        #expect(cart.lines.map(\.productId) == ["p-0001"])
        try await services.favorites.setFavorite(productId: "p-0001", isFavorite: true, for: guest)
        #expect(try await services.favorites.isFavorite(productId: "p-0001", for: guest))
    }
}
