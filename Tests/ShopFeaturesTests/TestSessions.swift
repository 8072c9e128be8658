import Foundation
import Shop
@_spi(Testing) import ShopFeatures

extension Fixture {
    /// The account the existing ViewModel tests shop as.
    static let account = Account(
        id: 1, email: "ann@example.com", name: "ann", bio: "", notificationsEnabled: true, createdAt: date)
    /// Its shopper: the one events of these tests name.
    static let shopper = Shopper.account(1)
    /// Another shopper, whose events a session of ``shopper`` must ignore.
    static let otherShopper = Shopper.account(2)
    /// A session value of ``account``.
    static let signedIn = AccountSession(
        account: account, sessionId: "session-1", token: "sft_test", expiresAt: date.addingTimeInterval(86_400))
}

extension ShopSession {
    /// A session signed in as ``Fixture/account`` from the start, whose account service must not be called, and
    /// whose "now" is ``Fixture/date``.
    @MainActor
    static func signedInForTests(events: ShopEvents, accounts: any AccountService = AccountServiceDouble()) -> ShopSession {
        let session = ShopSession(
            accounts: accounts, events: events, clock: ContinuousClock(), now: { Fixture.date }, makeGuestId: { "test-guest" })
        session.assumeSignedIn(Fixture.signedIn)
        return session
    }
}
