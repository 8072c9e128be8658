import Shop
import ShopFeatures

extension ShopSession {
    /// A guest session whose account service must not be called.
    @MainActor
    static func guestForTests(events: ShopEvents) -> ShopSession {
        ShopSession(accounts: UnusedAccountService(), events: events, clock: ContinuousClock(), makeGuestId: { "test-guest" })
    }
}

/// An account service for tests that never sign in: every call fails the test's expectations by throwing.
struct UnusedAccountService: AccountService {
    struct Unexpected: Error {}

    func register(email: String, password: String) async throws -> AccountSession { throw Unexpected() }
    func signIn(email: String, password: String) async throws -> AccountSession { throw Unexpected() }
    func resume(token: String) async throws -> AccountSession { throw Unexpected() }
    func signOut(sessionId: String) async throws { throw Unexpected() }
    func account(id: Int64) async throws -> Account { throw Unexpected() }
    func updateProfile(accountId: Int64, _ update: ProfileUpdate) async throws -> Account { throw Unexpected() }
    func adoptGuest(_ guestId: String, into accountId: Int64) async throws -> GuestAdoption { throw Unexpected() }
    func activeAccount(sessionId: String) async throws -> Account? { throw Unexpected() }
}
