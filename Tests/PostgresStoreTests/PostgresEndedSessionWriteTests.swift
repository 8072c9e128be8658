import Foundation
import PostgresNIO
@testable import PostgresStore
import Shop
@testable import ShopStore
import Testing

/// Writes made for a signed-in session (``WritingSession``) over PostgreSQL check, in their own transaction,
/// that the session is still live: a sign-out by another server refuses them at once, before this server
/// has read it from the change log, and a sign-out waits for the writes of its session under way.
@Suite(.enabled(if: TestPostgres.isAvailable, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster to test against (scripts/test.sh starts one)")) @MainActor
struct PostgresEndedSessionWriteTests {
    let now = PostgresTestNow()

    /// Every row an account-scoped write could add, change or remove, as text.
    private func storedData(_ server: PostgresTestServer) async throws -> [String] {
        try await server.database.read { session in
            var rows: [String] = []
            for sql in [
                "SELECT owner || ' ' || productId || ' ' || quantity FROM cart_line ORDER BY seq",
                "SELECT owner || ' ' || revision FROM cart_revision ORDER BY owner", "SELECT id FROM customer_order ORDER BY id",
                "SELECT owner || ' ' || productId FROM favorite ORDER BY owner, productId",
                "SELECT name || ' ' || bio || ' ' || notificationsEnabled FROM account",
                "SELECT seq || ' ' || (readAt IS NULL) FROM notification ORDER BY seq", "SELECT COUNT(*)::text FROM change_log",
            ] {
                rows += try await session.rows(PostgresQuery(unsafeSQL: sql)).map { try $0.decode(String.self) }
            }
            return rows
        }
    }

    @Test func aSessionSignedOutByAnotherServerWritesNothingForItsAccount() async throws {
        let a = try await PostgresTestServer(now: now)
        let b = try await PostgresTestServer(sharing: a.database, now: now)
        let orders = PostgresOrderService(database: b.database, feed: b.feed, now: { [now] in now.now })
        let signedIn = try await a.accounts.register(email: "ann@example.com", password: "secret123")
        let ann = signedIn.account.shopper
        try await WritingSession.$id.withValue(signedIn.sessionId) {
            try await b.cart.add(productId: "p-0001", quantity: 1, for: ann)
            _ = try await orders.placeOrder(expectedRevision: nil, for: ann)
            try await b.cart.add(productId: "p-0002", quantity: 1, for: ann)
            try await b.favorites.setFavorite(productId: "p-0003", isFavorite: true, for: ann)
        }
        try await a.accounts.signOut(sessionId: signedIn.sessionId)
        let before = try await storedData(a)

        let writes: [(String, () async throws -> Void)] = [
            ("add", { try await b.cart.add(productId: "p-0004", quantity: 1, for: ann) }),
            ("setQuantity", { try await b.cart.setQuantity(productId: "p-0002", quantity: 1, for: ann) }),
            ("remove", { try await b.cart.remove(productId: "p-0002", for: ann) }),
            ("clear", { try await b.cart.clear(for: ann) }),
            ("checkout", { _ = try await orders.placeOrder(expectedRevision: nil, for: ann) }),
            ("favourite", { try await b.favorites.setFavorite(productId: "p-0005", isFavorite: true, for: ann) }),
            ("profile", {
                _ = try await b.accounts.updateProfile(
                    accountId: signedIn.account.id, ProfileUpdate(name: "Mallory", email: "ann@example.com", bio: "x", notificationsEnabled: false))
            }),
            ("markRead", { try await b.notifications.markRead(ids: [InboxNotification.id(seq: 1)], of: ann) }),
            ("markAllRead", { try await b.notifications.markAllRead(of: ann) }),
        ]
        for (name, write) in writes {
            await #expect(throws: ShopError.sessionEnded, "\(name)") {
                try await WritingSession.$id.withValue(signedIn.sessionId) { try await write() }
            }
        }
        // Expired, not signed out: refused alike. A guest's writes are not checked.
        let other = try await a.accounts.signIn(email: "ann@example.com", password: "secret123")
        now.advance(by: 30 * 24 * 3600 + 1)
        await #expect(throws: ShopError.sessionEnded) {
            try await WritingSession.$id.withValue(other.sessionId) { try await b.cart.add(productId: "p-0004", quantity: 1, for: ann) }
        }
        #expect(try await storedData(a) == before)
        try await b.cart.add(productId: "p-0004", quantity: 1, for: .guest("g1"))
    }

    @Test func aSignOutWaitsForAWriteOfItsSessionUnderWay() async throws {
        let a = try await PostgresTestServer(now: now)
        let b = try await PostgresTestServer(sharing: a.database, now: now)
        let signedIn = try await a.accounts.register(email: "ann@example.com", password: "secret123")
        let ann = signedIn.account.shopper
        try await WritingSession.$id.withValue(signedIn.sessionId) { try await b.cart.add(productId: "p-0001", quantity: 1, for: ann) }

        // Another program holds the cart's lock: B's add checks the session, then waits for the cart.
        let other = try await PostgresTestConnection(a.database.url)
        try await other.execute("BEGIN")
        try await other.execute("UPDATE cart_revision SET revision = revision WHERE owner = '\(ann.storageKey)'")
        let add = Task {
            try await WritingSession.$id.withValue(signedIn.sessionId) { try await b.cart.add(productId: "p-0001", quantity: 1, for: ann) }
        }
        try await other.waitForLockWaiters(1)
        // The sign-out waits for the add, which checked the session before it: it does not end the session under it.
        let signOut = Task { try await a.accounts.signOut(sessionId: signedIn.sessionId) }
        try await other.waitForLockWaiters(2)
        try await other.execute("COMMIT")
        let cart = try await add.value
        try await signOut.value
        try await other.close()
        #expect(cart.lines.map(\.quantity) == [2])
        #expect(try await a.accounts.activeAccount(sessionId: signedIn.sessionId) == nil)
    }
}
