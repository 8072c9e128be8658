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
/// session in another server, or the token's expiry, makes it a guest and says why in ``endedReason``. Its
/// writes do not wait for the feed: each names the session to the store (``WritingSession``), which refuses
/// it when the session ended there (``ShopError/sessionEnded``); the session then becomes a guest at once,
/// as when the feed tells it.
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
    /// The order of the session's cart writes, whichever of its ViewModels asks for them.
    @ObservationIgnored public let cartWrites = CartWriteOrder()
    /// The executor the tasks of the session's cart writes prefer (the server's main-queue executor: their
    /// waits for the store then resume on the main thread, not by way of the global pool); nil: none.
    @ObservationIgnored public let taskExecutor: (any TaskExecutor)?

    @ObservationIgnored private let accounts: any AccountService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private let clock: any Clock<Duration>
    /// The current date (the session's expiry, and the time of the analytics events its ViewModels record).
    @ObservationIgnored let now: @Sendable () -> Date
    @ObservationIgnored private let makeGuestId: @Sendable () -> String
    @ObservationIgnored private var sessionId: String?
    @ObservationIgnored private var expiry: Task<Void, Never>?
    @ObservationIgnored private var subscription: ShopSubscription?
    @ObservationIgnored private var switching = false
    @ObservationIgnored private var writesInFlight = 0
    @ObservationIgnored private var switchWaiters: [CheckedContinuation<Void, Never>] = []
    @ObservationIgnored private var drainWaiters: [CheckedContinuation<Void, Never>] = []
    /// The session a sign-in under way is switching to, and whether it was signed out meanwhile.
    @ObservationIgnored private var pendingSessionId: String?
    /// The account a sign-in under way is switching to, as the feed last showed it (a profile saved elsewhere
    /// while the guest's data moves is kept).
    @ObservationIgnored private var pendingAccount: Account?
    @ObservationIgnored private var endedWhileSigningIn = false

    private static let endedElsewhere = "You were signed out in another window."

    /// A guest session.
    /// - Parameters:
    ///   - accounts: the account service sign-out and the guest's adoption go through.
    ///   - events: the feed the session follows and announces its switches on.
    ///   - clock: the clock the token's expiry is timed on.
    ///   - now: the current date, to turn the token's expiry date into a wait on `clock`.
    ///   - makeGuestId: a new random guest id (unguessable: it names the guest's stored cart).
    public init(
        accounts: any AccountService, events: ShopEvents, clock: any Clock<Duration>,
        now: @escaping @Sendable () -> Date = { Date() }, makeGuestId: @escaping @Sendable () -> String,
        taskExecutor: (any TaskExecutor)? = nil
    ) {
        self.taskExecutor = taskExecutor
        self.accounts = accounts
        self.events = events
        self.clock = clock
        self.now = now
        self.makeGuestId = makeGuestId
        shopper = .guest(makeGuestId())
        events.shownShoppers?.show(shopper)
        subscription = events.subscribe { [weak self] in self?.handle($0) }
    }

    isolated deinit {
        events.shownShoppers?.hide(shopper)
    }

    /// Whether an account is signed in.
    public var isSignedIn: Bool { account != nil }

    /// Makes the session `signedIn`'s: the guest's cart and favourites move to the account (lines capped
    /// by stock and the per-order maximum are kept in ``cappedLines``), then every open ViewModel loads
    /// the account's data. Writes of the guest's data under way finish first, and writes that come
    /// meanwhile wait and go to the account (see ``write(_:)``).
    /// - Throws: `alreadySignedIn` when another sign-in of this connection won, or the adoption's failure;
    ///   the session then stays as it was, and a session this sign-in created is revoked (a resumed one,
    ///   which other tabs and servers may hold, is left alone).
    public func signIn(_ signedIn: AccountSession) async throws {
        await beginSwitch()
        defer { endSwitch() }
        let guest = shopper
        pendingSessionId = signedIn.sessionId
        endedWhileSigningIn = false
        // The account is shown from here (the feed reads its changes), so that a profile saved elsewhere while
        // the guest's data moves is not skipped; the switch below counts it for the session.
        pendingAccount = signedIn.account
        events.shownShoppers?.show(signedIn.account.shopper)
        defer {
            pendingSessionId = nil
            pendingAccount = nil
            events.shownShoppers?.hide(signedIn.account.shopper)
        }
        do {
            guard case .guest(let guestId) = guest else { throw ShopError.alreadySignedIn }
            let adoption = try await accounts.adoptGuest(guestId, into: signedIn.account.id)
            cappedLines = adoption.capped
        } catch {
            if signedIn.isNew { await revoke(signedIn.sessionId) }
            throw error
        }
        account = pendingAccount ?? signedIn.account
        sessionId = signedIn.sessionId
        endedReason = nil
        scheduleExpiry(at: signedIn.expiresAt)
        switchShopper(to: signedIn.account.shopper)
        // Signed out elsewhere while the guest's data moved: the sign-in stands for nothing now.
        if endedWhileSigningIn { becomeGuest(reason: Self.endedElsewhere) }
    }

    /// Signs out: the token stops working everywhere, and the session becomes a fresh guest.
    /// - Throws: ``ShopError`` `signInRequired` when not signed in; the sign-out's storage failure (the
    ///   session then stays signed in, since its token still works).
    public func signOut() async throws {
        guard sessionId != nil else { throw ShopError(reason: ShopError.Reason.signInRequired, message: "Not signed in.") }
        await beginSwitch()
        defer { endSwitch() }
        guard let sessionId else { return }  // ended meanwhile
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

    /// Revokes a session this connection created but will not use, in a task of its own: the caller's
    /// cancellation must not stop it (a cancelled request's storage calls fail at once).
    public func revoke(_ sessionId: String) async {
        await Task { [accounts] in try? await accounts.signOut(sessionId: sessionId) }.value
    }

    /// Runs a write of the session's shopper's data (a cart change, a checkout, a favourite, the profile, the
    /// inbox), with that shopper, and with the signed-in session as ``WritingSession/id`` so that the store
    /// checks it is still live. While a sign-in or sign-out switches shopper it waits, and a switch waits for
    /// the writes under way: no write lands on a guest whose data was just moved (answered as stored, yet out
    /// of every screen's reach).
    /// - Throws: what `body` throws; ``ShopError/sessionEnded`` when the store found the session signed out
    ///   or expired (nothing was stored), after the session became a guest (``endedReason`` says why).
    public func write<T>(_ body: (Shopper) async throws -> T) async throws -> T {
        while switching { await withCheckedContinuation { switchWaiters.append($0) } }
        writesInFlight += 1
        defer {
            writesInFlight -= 1
            if writesInFlight == 0 {
                let waiters = drainWaiters
                drainWaiters = []
                for waiter in waiters { waiter.resume() }
            }
        }
        let (shopper, writing) = (shopper, sessionId)
        do {
            return try await WritingSession.$id.withValue(writing) { try await body(shopper) }
        } catch let error as ShopError where error == .sessionEnded {
            // Ended in the store before the feed said so here: the same as when it does.
            if let writing, sessionId == writing { becomeGuest(reason: Self.endedElsewhere) }
            throw error
        }
    }

    /// Runs a write of `shopper`'s data as ``write(_:)`` does, if the session still shops as `shopper` when it
    /// runs (signed out, or in as someone else, since the action was asked for: not this shopper's write).
    /// - Parameter what: what the write does, for the refusal's message (`"check out"`).
    /// - Throws: `signInRequired` when the session shops as someone else; as ``write(_:)``.
    public func write<T>(as shopper: Shopper, to what: String, _ body: () async throws -> T) async throws -> T {
        try await write { current in
            guard current == shopper else { throw ShopError.signInRequired(what) }
            return try await body()
        }
    }

    private func beginSwitch() async {
        while switching { await withCheckedContinuation { switchWaiters.append($0) } }
        switching = true
        while writesInFlight > 0 { await withCheckedContinuation { drainWaiters.append($0) } }
    }

    private func endSwitch() {
        switching = false
        let waiters = switchWaiters
        switchWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// Makes a new session the account's at once: no guest data to adopt, nothing published, no expiry
    /// timer. For tests that need a signed-in session before any ViewModel opens.
    @_spi(Testing)
    public func assumeSignedIn(_ signedIn: AccountSession) {
        account = signedIn.account
        sessionId = signedIn.sessionId
        events.shownShoppers?.switchShown(from: shopper, to: signedIn.account.shopper)
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
        // Shown before the ViewModels load the new shopper's data (see `ShownShoppers`).
        events.shownShoppers?.switchShown(from: self.shopper, to: shopper)
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

    /// What the store says of the session `asked` (its account, or nil when it ended), applied to it if it is
    /// still this session's, pending (a sign-in under way) or current.
    private func apply(activeAccount account: Account?, ofSession asked: String) {
        if pendingSessionId == asked {
            if let account { pendingAccount = account } else { endedWhileSigningIn = true }
        } else if sessionId == asked {
            if let account { self.account = account } else { becomeGuest(reason: Self.endedElsewhere) }
        }
    }

    private func handle(_ event: ShopEvent) {
        switch event {
        case .accountChanged(let changed) where changed.id == account?.id:
            account = changed
        case .accountChanged(let changed) where changed.id == pendingAccount?.id:
            pendingAccount = changed
        case .sessionEnded(let ended) where ended == sessionId:
            becomeGuest(reason: Self.endedElsewhere)
        case .sessionEnded(let ended) where ended == pendingSessionId:
            endedWhileSigningIn = true
        case .resync where sessionId != nil || pendingSessionId != nil:
            // Missed changes may include this session's sign-out or a profile change, or, while a sign-in moves
            // the guest's data, a profile saved or the session ended for the one it switches to: ask the store
            // about that session, and apply the answer to it, pending or current by the time the answer comes.
            events.track(Task { [weak self, accounts, asked = sessionId ?? pendingSessionId] in
                guard let asked else { return }
                let account: Account?
                do { account = try await accounts.activeAccount(sessionId: asked) } catch { return }
                self?.apply(activeAccount: account, ofSession: asked)
            })
        default:
            break
        }
    }
}
