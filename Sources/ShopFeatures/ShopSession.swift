import Foundation
import Observation
import Shop

/// One connection's session: whose cart, favourites and orders its ViewModels show and change.
///
/// It starts as a guest with a random id of its own. Signing in (or registering, or resuming a kept token)
/// moves the guest's cart and favourites to the account and makes the session the account's; signing out
/// makes it a fresh guest. Every switch publishes ``ShopEvent/sessionChanged(_:)``, so every open
/// ViewModel loads the new shopper's data; the action that switched answers after they did.
///
/// The session follows the feed: a profile saved anywhere updates ``account``; a sign-out of this
/// session in another server, or the token's expiry, makes it a guest and says why in ``endedReason``.
@MainActor @Observable
public final class ShopSession {
    /// Whose data the session's ViewModels show.
    public private(set) var shopper: Shopper
    /// The signed-in account, or nil for a guest.
    public private(set) var account: Account?
    /// Why the last sign-in ended without this session signing out (signed out elsewhere, expired); nil
    /// otherwise.
    public private(set) var endedReason: String?
    /// Cart lines the last sign-in's merge could not keep in full; cleared when the cart screen dismisses
    /// them or the user changes the cart.
    public private(set) var cappedLines: [CappedLine] = []

    @ObservationIgnored private let accounts: any AccountService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private let now: @Sendable () -> Date
    @ObservationIgnored private let makeGuestId: @Sendable () -> String
    @ObservationIgnored private var sessionId: String?
    @ObservationIgnored private var expiry: Task<Void, Never>?
    @ObservationIgnored private var subscription: ShopSubscription?

    /// A guest session.
    /// - Parameters:
    ///   - accounts: the account service sign-out and the guest's adoption go through.
    ///   - events: the feed the session follows and announces its switches on.
    ///   - clock: the clock the token's expiry is timed on.
    ///   - now: the current date, to turn the token's expiry date into a wait on `clock`.
    ///   - makeGuestId: a new random guest id (unguessable: it names the guest's stored cart).
    public init(
        accounts: any AccountService, events: ShopEvents, clock: any Clock<Duration>,
        now: @escaping @Sendable () -> Date = { Date() }, makeGuestId: @escaping @Sendable () -> String
    ) {
        self.accounts = accounts
        self.events = events
        self.clock = clock
        self.now = now
        self.makeGuestId = makeGuestId
        shopper = .guest(makeGuestId())
        subscription = events.subscribe { [weak self] in self?.handle($0) }
    }

    /// Whether an account is signed in.
    public var isSignedIn: Bool { account != nil }

    /// Makes the session `signedIn`'s: the guest's cart and favourites move to the account (lines capped
    /// by stock and the per-order maximum are kept in ``cappedLines``), then every open ViewModel loads
    /// the account's data.
    /// - Throws: the adoption's failure; the session then stays as it was (the account's sign-in is
    ///   revoked, so no token of a half-done sign-in works).
    public func signIn(_ signedIn: AccountSession) async throws {
        let guest = shopper
        do {
            // Two sign-ins of one connection at once (two sign-in screens): the later one is refused, and
            // its session revoked, rather than leaving a token nobody holds working for 30 days.
            guard case .guest(let guestId) = guest else { throw ShopError.alreadySignedIn }
            let adoption = try await accounts.adoptGuest(guestId, into: signedIn.account.id)
            guard shopper == guest else { throw ShopError.alreadySignedIn }
            cappedLines = adoption.capped
        } catch {
            try? await accounts.signOut(sessionId: signedIn.sessionId)
            throw error
        }
        account = signedIn.account
        sessionId = signedIn.sessionId
        endedReason = nil
        scheduleExpiry(at: signedIn.expiresAt)
        switchShopper(to: signedIn.account.shopper)
    }

    /// Signs out: the token stops working everywhere, and the session becomes a fresh guest.
    /// - Throws: ``ShopError`` `signInRequired` when not signed in; the sign-out's storage failure (the
    ///   session then stays signed in, since its token still works).
    public func signOut() async throws {
        guard let sessionId else { throw ShopError(reason: ShopError.Reason.signInRequired, message: "Not signed in.") }
        // Forgotten first, so that this sign-out's own `sessionEnded` is not taken for one made elsewhere.
        self.sessionId = nil
        do {
            try await accounts.signOut(sessionId: sessionId)
        } catch {
            if account != nil, self.sessionId == nil { self.sessionId = sessionId }
            throw error
        }
        becomeGuest(reason: nil)
    }

    /// Makes a new session the account's at once: no guest data to adopt, nothing published, no expiry
    /// timer. For tests that need a signed-in session before any ViewModel opens.
    @_spi(Testing)
    public func assumeSignedIn(_ signedIn: AccountSession) {
        account = signedIn.account
        sessionId = signedIn.sessionId
        shopper = signedIn.account.shopper
    }

    /// The guest id while a guest; nil when signed in.
    public var guestId: String? {
        if case .guest(let id) = shopper { id } else { nil }
    }

    /// Forgets the capped lines of the last sign-in (the cart screen showed them and the user moved on).
    public func dismissCappedLines() {
        if !cappedLines.isEmpty { cappedLines = [] }
    }

    private func becomeGuest(reason: String?) {
        expiry?.cancel()
        expiry = nil
        account = nil
        sessionId = nil
        cappedLines = []
        endedReason = reason
        switchShopper(to: .guest(makeGuestId()))
    }

    private func switchShopper(to shopper: Shopper) {
        self.shopper = shopper
        events.publish(.sessionChanged(shopper))
    }

    private func scheduleExpiry(at date: Date) {
        expiry?.cancel()
        let seconds = max(0, date.timeIntervalSince(now()))
        let sessionId = sessionId
        expiry = Task { [weak self, clock] in
            do { try await clock.sleep(for: .milliseconds(Int64(seconds * 1000))) } catch { return }
            guard let self, self.sessionId == sessionId else { return }
            self.becomeGuest(reason: "Your session expired; sign in again.")
        }
    }

    private func handle(_ event: ShopEvent) {
        switch event {
        case .accountChanged(let changed) where changed.id == account?.id:
            account = changed
        case .sessionEnded(let ended) where ended == sessionId:
            becomeGuest(reason: "You were signed out in another window.")
        default:
            break
        }
    }
}
