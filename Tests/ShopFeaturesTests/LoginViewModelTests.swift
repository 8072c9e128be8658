import Clocks
import Foundation
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

@Suite @MainActor struct LoginViewModelTests {
    let accounts = AccountServiceDouble()
    let events = ShopEvents()
    let clock = TestClock()
    let session: ShopSession
    let viewModel: LoginViewModel
    let guestIds = Counter()

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func next() -> String { lock.withLock { value += 1; return "guest-\(value)" } }
    }

    init() {
        let guestIds = guestIds
        session = ShopSession(accounts: accounts, events: events, clock: clock, now: { Fixture.date }, makeGuestId: { guestIds.next() })
        viewModel = LoginViewModel(accounts: accounts, session: session)
    }

    func signIn() async throws {
        accounts.signIn.returns(Fixture.signedIn)
        accounts.adoptGuest.returns(GuestAdoption(cart: .empty, capped: []))
        _ = try await viewModel.login(email: "ann@example.com", password: "secret123")
    }

    @Test func signingInGoesFromLoggedOutThroughLoggingInToLoggedIn() async throws {
        #expect(viewModel.state == LoginState(phase: .loggedOut, user: nil, message: nil, lockedUntil: nil, cappedLines: []))
        let gate = Gate()
        accounts.signIn.handle { _ in
            await gate.wait()
            return Fixture.signedIn
        }
        accounts.adoptGuest.returns(GuestAdoption(cart: .empty, capped: []))
        let attempt = Task { try await viewModel.login(email: "ann@example.com", password: "secret123") }
        await settle { viewModel.phase == .loggingIn }
        await #expect(throws: ShopError.alreadySubmitting) { try await viewModel.login(email: "ann@example.com", password: "x") }
        gate.open()
        #expect(try await attempt.value.token == Fixture.signedIn.token)
        #expect(viewModel.state.phase == .loggedIn)
        #expect(viewModel.state.user?.email == "ann@example.com")
        #expect(session.shopper == Fixture.shopper)
        #expect(accounts.adoptGuest.calls == [.init(guestId: "guest-1", accountId: 1)])
        await #expect(throws: ShopError.alreadySignedIn) { try await viewModel.login(email: "ann@example.com", password: "secret123") }
    }

    @Test func aFailedAttemptSaysOnlyThatTheEmailOrPasswordIsWrongAndMayBeRetried() async throws {
        accounts.signIn.fails(ShopError.invalidCredentials)
        await #expect(throws: ShopError.invalidCredentials) { try await viewModel.login(email: "ann@example.com", password: "nope") }
        #expect(viewModel.state == LoginState(
            phase: .failed, user: nil, message: "The email or password is wrong.", lockedUntil: nil, cappedLines: []))
        try await signIn()  // refused only while signed in or signing in
        #expect(viewModel.state.phase == .loggedIn)
        #expect(viewModel.state.message == nil)
    }

    @Test func aLockedEmailShowsUntilWhen() async throws {
        accounts.signIn.fails(ShopError.signInLocked(retryAfter: 60, lockedUntil: "2025-06-01T00:01:00Z"))
        await #expect(throws: ShopError.self) { try await viewModel.login(email: "ann@example.com", password: "nope") }
        #expect(viewModel.state.phase == .failed)
        #expect(viewModel.state.lockedUntil == Timestamp(Fixture.date.addingTimeInterval(60)))
        #expect(viewModel.state.message == "Too many failed sign-ins for this email. Try again in 60 seconds.")
    }

    @Test func signingOutRevokesTheSessionAndGivesAFreshGuest() async throws {
        try await signIn()
        accounts.signOut.returns(())
        let recorder = Recorder(events)
        try await viewModel.logout()
        #expect(accounts.signOut.calls == ["session-1"])
        #expect(session.shopper == .guest("guest-2"))
        #expect(recorder.events == [.sessionChanged(.guest("guest-2"))])
        #expect(viewModel.state == LoginState(phase: .loggedOut, user: nil, message: nil, lockedUntil: nil, cappedLines: []))
        await #expect(throws: ShopError.self) { try await viewModel.logout() }
    }

    @Test func aSignOutElsewhereOrTheTokensExpiryEndsTheSessionAndSaysWhy() async throws {
        try await signIn()
        events.publish(.sessionEnded(sessionId: "another-session"))
        #expect(session.isSignedIn)
        events.publish(.sessionEnded(sessionId: "session-1"))
        #expect(viewModel.state == LoginState(
            phase: .loggedOut, user: nil, message: "You were signed out in another window.", lockedUntil: nil, cappedLines: []))

        try await signIn()
        await settleUntilSleeping(clock)  // the expiry timer is set
        await clock.advance(by: .seconds(86_399))
        #expect(session.isSignedIn)
        await clock.advance(by: .seconds(1))
        await settle { !session.isSignedIn }
        #expect(viewModel.state.message == "Your session expired; sign in again.")
    }

    @Test func aProfileSavedElsewhereShowsInTheSignedInUser() async throws {
        try await signIn()
        var renamed = Fixture.account
        renamed.name = "Ann Smith"
        events.publish(.accountChanged(renamed))
        #expect(viewModel.state.user?.name == "Ann Smith")
    }

    @Test func cappedLinesOfTheMergeAreShownUntilDismissed() async throws {
        let capped = CappedLine(productId: "p-0001", name: "Product 1", requested: 7, kept: 5)
        accounts.signIn.returns(Fixture.signedIn)
        accounts.adoptGuest.returns(GuestAdoption(cart: .empty, capped: [capped]))
        _ = try await viewModel.login(email: "ann@example.com", password: "secret123")
        #expect(viewModel.state.cappedLines == [CappedLineSnapshot(capped)])
        session.dismissCappedLines()
        #expect(viewModel.state.cappedLines.isEmpty)
    }

    @Test func ofTwoSignInsAtOnceTheLaterIsRefusedAndItsSessionRevoked() async throws {
        let other = LoginViewModel(accounts: accounts, session: session)
        let gate = Gate()
        let second = AccountSession(
            account: Fixture.account, sessionId: "session-2", token: "sft_second", expiresAt: Fixture.signedIn.expiresAt)
        accounts.signIn.handle { credentials in
            if credentials.password == "second123" { await gate.wait() }
            return credentials.password == "second123" ? second : Fixture.signedIn
        }
        accounts.adoptGuest.returns(GuestAdoption(cart: .empty, capped: []))
        accounts.signOut.returns(())
        let later = Task { try await other.login(email: "ann@example.com", password: "second123") }
        await settle { other.phase == .loggingIn }
        _ = try await viewModel.login(email: "ann@example.com", password: "secret123")
        gate.open()
        await #expect(throws: ShopError.alreadySignedIn) { try await later.value }
        #expect(accounts.signOut.calls == ["session-2"])
        #expect(session.isSignedIn)
        #expect(other.state.phase == .loggedIn)
    }

    @Test func aFailedMergeLeavesTheGuestSignedOutAndRevokesTheNewSession() async throws {
        accounts.signIn.returns(Fixture.signedIn)
        accounts.adoptGuest.fails(ShopError.serviceUnavailable("accounts"))
        accounts.signOut.returns(())
        await #expect(throws: ShopError.self) { try await viewModel.login(email: "ann@example.com", password: "secret123") }
        #expect(session.shopper == .guest("guest-1"))
        #expect(accounts.signOut.calls == ["session-1"])
        #expect(viewModel.state.phase == .failed)
    }
}

/// Records a feed's events.
@MainActor
final class Recorder {
    private(set) var events: [ShopEvent] = []
    private var subscription: ShopSubscription?

    init(_ feed: ShopEvents) {
        subscription = feed.subscribe { [weak self] in self?.events.append($0) }
    }
}
