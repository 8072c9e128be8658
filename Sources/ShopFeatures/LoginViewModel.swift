import Foundation
import Observation
import Shop

/// Signing in and out: the session's state machine, `loggedOut -> loggingIn -> loggedIn(user)` or
/// `failed(message)`.
///
/// Signing in is refused unless logged out or failed. A wrong email and a wrong password give the same
/// message. After ``AccountRules/failuresBeforeLock`` failures for one email within 15 minutes, attempts are
/// refused for a growing delay, and the state says until when. Signing in with a kept token (`resume`)
/// follows the same path. The phase is derived: `loggedIn` whenever the session is signed in, however it
/// got there (a registration screen, a resumed token).
@MainActor @Observable
public final class LoginViewModel {
    /// What the last attempt is doing or did.
    private enum Attempt: Equatable {
        case none
        case running
        case failed(message: String, lockedUntil: Date?)
    }

    private var attempt: Attempt = .none

    @ObservationIgnored private let accounts: any AccountService
    @ObservationIgnored private let session: ShopSession
    @ObservationIgnored private var task: Task<Result<AccountSession, any Error>, Never>?

    /// Creates the ViewModel.
    public init(accounts: any AccountService, session: ShopSession) {
        self.accounts = accounts
        self.session = session
    }

    /// Creates the ViewModel from the service container.
    public convenience init(services: ShopServices, session: ShopSession) {
        self.init(accounts: services.accounts, session: session)
    }

    // MARK: State

    /// Where signing in stands.
    public var phase: AuthPhase {
        if attempt == .running { return .loggingIn }
        if session.isSignedIn { return .loggedIn }
        if case .failed = attempt { return .failed }
        return .loggedOut
    }

    /// The whole state as one value.
    public var state: LoginState {
        let failure: (message: String, lockedUntil: Date?)? = if case .failed(let message, let until) = attempt, !session.isSignedIn {
            (message, until)
        } else { nil }
        return LoginState(
            phase: phase, user: session.account.map(AccountSummary.init),
            message: failure?.message ?? (session.isSignedIn ? nil : session.endedReason),
            lockedUntil: failure?.lockedUntil.map(Timestamp.init),
            cappedLines: session.cappedLines.map(CappedLineSnapshot.init))
    }

    // MARK: Lifecycle

    /// Nothing to load: the session is already known.
    public func appear() {}

    /// Cancels a sign-in under way (a session it created meanwhile is revoked again: nothing half-signed-in
    /// stays).
    public func close() {
        task?.cancel()
    }

    // MARK: Intents

    /// Signs in with an email and a password.
    /// - Returns: the session issued, whose token a front end may keep to ``resume(token:)`` later.
    /// - Throws: ``ShopError`` `alreadySignedIn`, `alreadySubmitting` while an attempt runs,
    ///   `invalidCredentials`, `signInLocked`, or an operational failure; each also shows as `failed`.
    public func login(email: String, password: String) async throws -> AccountSession {
        try await run { accounts in try await accounts.signIn(email: email, password: password) }
    }

    /// Signs in with a token kept from an earlier sign-in (in this or another server process).
    /// - Throws: ``ShopError`` `sessionInvalid` (malformed, unknown, expired or signed out), and as
    ///   ``login(email:password:)``.
    public func resume(token: String) async throws -> AccountSession {
        try await run { accounts in try await accounts.resume(token: token) }
    }

    /// Signs out: the token stops working everywhere and the session becomes a fresh guest.
    /// - Throws: ``ShopError`` `signInRequired` when not signed in, `alreadySubmitting` while a sign-in
    ///   runs, or the sign-out's failure.
    public func logout() async throws {
        guard attempt != .running else { throw ShopError.alreadySubmitting }
        try await session.signOut()
        attempt = .none
    }

    private func run(_ signIn: @escaping @Sendable (any AccountService) async throws -> AccountSession) async throws -> AccountSession {
        guard attempt != .running else { throw ShopError.alreadySubmitting }
        guard !session.isSignedIn else { throw ShopError.alreadySignedIn }
        attempt = .running
        let task = Task { [accounts, session] () -> Result<AccountSession, any Error> in
            do {
                let signedIn = try await signIn(accounts)
                if Task.isCancelled {
                    // Abandoned: a session this attempt created is revoked (a resumed one is others' too).
                    if signedIn.isNew { await session.revoke(signedIn.sessionId) }
                    return .failure(CancellationError())
                }
                try await session.signIn(signedIn)
                return .success(signedIn)
            } catch {
                return .failure(error)
            }
        }
        self.task = task
        let result = await task.valueCancellingWithCaller()
        self.task = nil
        switch result {
        case .success:
            attempt = .none
        case .failure(let error as ShopError):
            let lockedUntil = error.details["lockedUntil"].flatMap { try? Date($0, strategy: .iso8601) }
            attempt = .failed(message: error.message, lockedUntil: lockedUntil)
        case .failure(is CancellationError):
            attempt = .none
        case .failure(let error):
            attempt = .failed(message: "Signing in failed: \(error)", lockedUntil: nil)
        }
        return try result.get()
    }
}

/// Where signing in stands, on the wire.
public enum AuthPhase: String, Codable, CaseIterable, Sendable {
    /// A guest; no attempt failed since.
    case loggedOut
    /// An attempt is running.
    case loggingIn
    /// Signed in (`user` says who).
    case loggedIn
    /// The last attempt failed (`message` says why).
    case failed
}
