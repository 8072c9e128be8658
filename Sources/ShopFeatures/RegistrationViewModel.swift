import Foundation
import Observation
import Shop

/// Signing up: email, password, its confirmation and the terms, then `register`.
///
/// Each field is checked ``validationDelay`` after its last change, on the injected clock (a newer change
/// cancels the pending check); errors show only for fields the user touched, and go when fixed (at the
/// next check). ``isFormValid`` is derived from the values at once. Registering is refused while the form
/// is invalid (every error then shows) or submitting; an email already registered becomes the email
/// field's error; success signs the session in (the guest cart moves to the new account).
///
/// The passwords are held only until the registration is sent; they are never in the state.
@MainActor @Observable
public final class RegistrationViewModel {
    /// How long after its last change a field is checked.
    public static let validationDelay = Duration.milliseconds(300)

    public private(set) var email = ""
    public private(set) var acceptedTerms = false
    /// Fields the user changed (their errors show).
    public private(set) var touched: Set<RegistrationField> = []
    /// The errors shown: of touched fields, as of their last check.
    public private(set) var shownErrors: [RegistrationField: String] = [:]
    public private(set) var submitPhase: SubmitPhase = .idle

    @ObservationIgnored private var password = ""
    @ObservationIgnored private var confirmPassword = ""
    /// An email the store said is registered already.
    private var takenEmail: String?
    private var pendingChecks: [RegistrationField: Task<Void, Never>] = [:]

    @ObservationIgnored private let accounts: any AccountService
    @ObservationIgnored private let session: ShopSession
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private var submitTask: Task<Result<AccountSession, any Error>, Never>?

    /// Creates the ViewModel.
    public init(accounts: any AccountService, session: ShopSession, clock: any Clock<Duration>) {
        self.accounts = accounts
        self.session = session
        self.clock = clock
    }

    /// Creates the ViewModel from the service container.
    public convenience init(services: ShopServices, session: ShopSession, clock: any Clock<Duration>) {
        self.init(accounts: services.accounts, session: session, clock: clock)
    }

    // MARK: State

    /// Every invalid field's message as the values are now, touched or not.
    public var fieldErrors: [RegistrationField: String] {
        var errors: [RegistrationField: String] = [:]
        errors[.email] = AccountRules.emailError(email)
            ?? (takenEmail == AccountRules.normalizedEmail(email) ? "An account with this email already exists." : nil)
        errors[.password] = AccountRules.passwordError(password)
        errors[.confirmPassword] = AccountRules.confirmationError(confirmPassword, password: password)
        errors[.acceptedTerms] = acceptedTerms ? nil : "Accept the terms to register."
        return errors
    }

    /// Whether `register` would be sent.
    public var isFormValid: Bool { fieldErrors.isEmpty }

    /// The whole state as one value.
    public var state: RegistrationState {
        RegistrationState(
            email: email, acceptedTerms: acceptedTerms,
            errors: Dictionary(uniqueKeysWithValues: shownErrors.map { ($0.key.rawValue, $0.value) }),
            checking: pendingChecks.keys.map(\.rawValue).sorted(),
            isFormValid: isFormValid, submitPhase: submitPhase.name, error: submitPhase.error,
            signedIn: session.isSignedIn)
    }

    // MARK: Lifecycle

    /// Nothing to load.
    public func appear() {}

    /// Cancels pending checks and a registration under way.
    public func close() {
        for task in pendingChecks.values { task.cancel() }
        pendingChecks = [:]
        submitTask?.cancel()
    }

    // MARK: Intents

    /// Sets a text field; it is checked ``validationDelay`` later unless it changes again.
    /// - Throws: ``ShopError`` `alreadySubmitting` while registering.
    public func setField(_ field: RegistrationField, _ value: String) throws {
        guard submitPhase != .submitting else { throw ShopError.alreadySubmitting }
        switch field {
        case .email: email = value
        case .password: password = value
        case .confirmPassword: confirmPassword = value
        case .acceptedTerms:
            guard let accepted = Bool(value) else {
                throw ShopError.validationFailed(["acceptedTerms": "Must be true or false."])
            }
            acceptedTerms = accepted
        }
        if submitPhase == .succeeded || submitPhase.error != nil { submitPhase = .idle }
        touched.insert(field)
        scheduleCheck(of: field)
        // The confirmation is checked against the password: a new password re-checks it.
        if field == .password, touched.contains(.confirmPassword) { scheduleCheck(of: .confirmPassword) }
    }

    /// Accepts or declines the terms (checked like a text field).
    /// - Throws: ``ShopError`` `alreadySubmitting` while registering.
    public func setAcceptedTerms(_ accepted: Bool) throws {
        try setField(.acceptedTerms, String(accepted))
    }

    /// Creates the account and signs the session in.
    /// - Returns: the session issued, whose token a front end may keep.
    /// - Throws: ``ShopError`` `alreadySignedIn`, `alreadySubmitting`, `validationFailed` (every invalid
    ///   field, now shown), `emailTaken` (shown as the email's error); operational failures show as
    ///   `submitPhase` `failed` and are thrown too.
    public func register() async throws -> AccountSession {
        guard submitTask == nil else { throw ShopError.alreadySubmitting }
        guard !session.isSignedIn else { throw ShopError.alreadySignedIn }
        let errors = fieldErrors
        guard errors.isEmpty else {
            showAllErrors()
            throw ShopError.validationFailed(Dictionary(uniqueKeysWithValues: errors.map { ($0.key.rawValue, $0.value) }))
        }
        submitPhase = .submitting
        let (email, password) = (AccountRules.normalizedEmail(email), password)
        let task = Task { [accounts, session] () -> Result<AccountSession, any Error> in
            do {
                let signedIn = try await accounts.register(email: email, password: password)
                // The account is stored now: a cancellation that comes later is too late, and the session
                // signs in anyway (in a task the caller's cancellation does not reach), so the answer
                // tells what is stored.
                try await Task { try await session.signIn(signedIn) }.value
                return .success(signedIn)
            } catch {
                return .failure(error)
            }
        }
        submitTask = task
        let result = await task.valueCancellingWithCaller()
        submitTask = nil
        switch result {
        case .success:
            submitPhase = .succeeded
            self.password = ""
            confirmPassword = ""
        case .failure(let error as ShopError) where error.reason == ShopError.Reason.emailTaken:
            takenEmail = email
            submitPhase = .idle
            touched.insert(.email)
            shownErrors[.email] = fieldErrors[.email]
        case .failure(let error):
            switch Failure(error) {
            case .cancelled, .refused: submitPhase = .idle
            case .operational(let info): submitPhase = .failed(info)
            }
        }
        return try result.get()
    }

    // MARK: Checks

    private func scheduleCheck(of field: RegistrationField) {
        pendingChecks[field]?.cancel()
        let delay = clock.sleep(endingAfter: Self.validationDelay)
        pendingChecks[field] = Task { [weak self] in
            do { try await delay() } catch { return }
            guard let self, !Task.isCancelled else { return }
            self.shownErrors[field] = self.fieldErrors[field]
            self.pendingChecks[field] = nil
        }
    }

    private func showAllErrors() {
        for task in pendingChecks.values { task.cancel() }
        pendingChecks = [:]
        touched = Set(RegistrationField.allCases)
        shownErrors = fieldErrors
    }
}

/// A registration field.
public enum RegistrationField: String, Codable, CaseIterable, Sendable {
    case email, password, confirmPassword, acceptedTerms
}
