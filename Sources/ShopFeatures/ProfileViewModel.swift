import Foundation
import Observation
import Shop

/// The signed-in account's profile: name, email, bio and the notifications switch, edited as a draft.
///
/// Needs a signed-in session (opening it for a guest is refused with `signInRequired`). It follows the
/// session: signing in as someone else loads their profile; signing out fails the screen with
/// `signInRequired`'s message. A save made anywhere (another screen, another server) shows at once in
/// every field the user has not changed; the fields the user changed keep their draft. `save()` stores
/// only the fields the user changed (those that differ from the stored profile) and leaves the others as
/// they are stored, so saving a new name never puts back a bio that another screen saved meanwhile.
@MainActor @Observable
public final class ProfileViewModel {
    public private(set) var phase: Phase = .idle
    /// The profile as stored.
    public private(set) var saved: Account?
    /// The draft.
    public private(set) var fields = ProfileFields()
    /// Fields the user changed since the last load or save (their errors show).
    public private(set) var touched: Set<ProfileField> = []
    public private(set) var savePhase: SubmitPhase = .idle

    /// An email the store said another account has.
    private var takenEmail: String?

    @ObservationIgnored private let accounts: any AccountService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private let session: ShopSession
    @ObservationIgnored private let load = ReplaceableLoad()
    @ObservationIgnored private var subscription: ShopSubscription?
    @ObservationIgnored private var saveTask: Task<Result<Account, any Error>, Never>?

    /// Creates the ViewModel for the session's account.
    /// - Throws: ``ShopError`` `signInRequired` for a guest session.
    public init(accounts: any AccountService, events: ShopEvents, session: ShopSession) throws {
        guard session.isSignedIn else { throw ShopError.signInRequired("see your profile") }
        self.accounts = accounts
        self.events = events
        self.session = session
    }

    /// Creates the ViewModel from the service container.
    /// - Throws: ``ShopError`` `signInRequired` for a guest session.
    public convenience init(services: ShopServices, session: ShopSession) throws {
        try self.init(accounts: services.accounts, events: services.events, session: session)
    }

    // MARK: State

    /// Every invalid field's message, touched or not.
    public var fieldErrors: [ProfileField: String] {
        var errors: [ProfileField: String] = [:]
        errors[.name] = AccountRules.nameError(fields.name)
        errors[.email] = AccountRules.emailError(fields.email)
            ?? (takenEmail == AccountRules.normalizedEmail(fields.email) ? "Another account has this email." : nil)
        errors[.bio] = AccountRules.bioError(fields.bio)
        return errors
    }

    /// Whether the draft can be saved.
    public var isValid: Bool { fieldErrors.isEmpty }

    /// Whether the draft differs from the stored profile.
    public var hasChanges: Bool { saved.map { ProfileFields($0) != fields } ?? false }

    /// The whole state as one value.
    public var state: ProfileState {
        let visible = fieldErrors.filter { touched.contains($0.key) }
        return ProfileState(
            phase: phase.name, error: phase.error ?? savePhase.error, accountId: saved?.id, fields: fields,
            errors: Dictionary(uniqueKeysWithValues: visible.map { ($0.key.rawValue, $0.value) }),
            isValid: isValid, hasChanges: hasChanges, savePhase: savePhase.name)
    }

    // MARK: Lifecycle

    /// Subscribes to the feed and loads the profile.
    public func appear() {
        guard subscription == nil else { return }
        subscription = events.subscribe { [weak self] in self?.handle($0) }
        startLoad()
    }

    /// Cancels every task and unsubscribes.
    public func close() {
        subscription?.cancel()
        subscription = nil
        load.cancel()
        saveTask?.cancel()
        if phase == .loading { phase = .idle }
    }

    // MARK: Intents

    /// Loads the profile again (the retry after a failed load); the draft is replaced.
    public func refresh() async -> IntentOutcome {
        await load.outcome(of: startLoad())
    }

    /// Sets a text field of the draft.
    /// - Throws: ``ShopError`` `notReady`/`loadFailed`/`signInRequired` when no profile is shown,
    ///   `alreadySubmitting` while saving.
    public func setField(_ field: ProfileField, _ value: String) throws {
        try requireLoaded()
        switch field {
        case .name: fields.name = value
        case .email: fields.email = value
        case .bio: fields.bio = value
        }
        touched.insert(field)
        if savePhase != .idle { savePhase = .idle }
    }

    /// Turns notifications on or off in the draft.
    /// - Throws: as ``setField(_:_:)``.
    public func setNotificationsEnabled(_ enabled: Bool) throws {
        try requireLoaded()
        fields.notificationsEnabled = enabled
        if savePhase != .idle { savePhase = .idle }
    }

    /// Puts the stored profile back into the draft.
    /// - Throws: as ``setField(_:_:)``.
    public func discardChanges() throws {
        try requireLoaded()
        if let saved { fields = ProfileFields(saved) }
        touched = []
        savePhase = .idle
    }

    /// Saves the fields of the draft that differ from the stored profile (the others stay as they are
    /// stored, whatever another screen saved meanwhile); every open ViewModel of the account (here and in
    /// other servers) shows the result. With nothing changed, nothing is written and the draft shows the
    /// profile as stored.
    /// - Throws: ``ShopError`` `validationFailed` (every invalid field, now shown), `emailTaken` (shown as
    ///   the email's error), `alreadySubmitting`, or as ``setField(_:_:)``. Operational failures show as
    ///   `savePhase` `failed`.
    public func save() async throws {
        try requireLoaded()
        guard let stored = saved else { throw ShopError.notReady }
        let errors = fieldErrors
        guard errors.isEmpty else {
            touched = Set(ProfileField.allCases)
            throw ShopError.validationFailed(Dictionary(uniqueKeysWithValues: errors.map { ($0.key.rawValue, $0.value) }))
        }
        savePhase = .submitting
        let update = changes(from: stored)
        let task = Task { [accounts, session, accountId = stored.id] () -> Result<Account, any Error> in
            do {
                // As the session's write: the store checks that its sign-in still holds.
                return .success(try await session.write(as: .account(accountId), to: "edit your profile") {
                    try await accounts.updateProfile(accountId: accountId, update)
                })
            } catch {
                return .failure(error)
            }
        }
        saveTask = task
        let result = await task.valueCancellingWithCaller()
        saveTask = nil
        switch result {
        case .success(let account):
            show(account, replacingDraft: true)
            savePhase = .succeeded
        case .failure(let error as ShopError) where error.reason == ShopError.Reason.emailTaken:
            takenEmail = update.email
            touched.insert(.email)
            savePhase = .idle
        case .failure(let error):
            switch Failure(error) {
            case .cancelled, .refused: savePhase = .idle
            case .operational(let info): savePhase = .failed(info)
            }
        }
        _ = try result.get()
    }

    // MARK: Loading

    private func requireLoaded() throws {
        guard savePhase != .submitting else { throw ShopError.alreadySubmitting }
        guard session.isSignedIn else { throw ShopError.signInRequired("edit your profile") }
        switch phase {
        case .loaded: return
        case .failed(let message, let retryable):
            throw ShopError.loadFailed("profile", message: "The profile could not be loaded: \(message)", retryable: retryable)
        case .idle, .loading: throw ShopError.notReady
        }
    }

    /// The change that stores the fields the user changed: those whose draft (trimmed and normalized as
    /// the store keeps it) differs from `stored`.
    private func changes(from stored: Account) -> ProfileUpdate {
        let draft = ProfileUpdate(name: fields.name, email: fields.email, bio: fields.bio, notificationsEnabled: fields.notificationsEnabled)
            .normalized
        return ProfileUpdate(
            name: draft.name == stored.name ? nil : draft.name,
            email: draft.email == stored.email ? nil : draft.email,
            bio: draft.bio == stored.bio ? nil : draft.bio,
            notificationsEnabled: draft.notificationsEnabled == stored.notificationsEnabled ? nil : draft.notificationsEnabled)
    }

    /// Shows `account` as stored. Its values replace the whole draft when `replacingDraft` or when the
    /// draft was unchanged; otherwise only the fields the user has not changed (those that still show the
    /// values stored before), and the fields the user changed keep their edits.
    private func show(_ account: Account, replacingDraft: Bool) {
        let previous = saved.map(ProfileFields.init)
        let stored = ProfileFields(account)
        saved = account
        guard !replacingDraft, let previous, previous != fields else {
            fields = stored
            touched = []
            return
        }
        if fields.name == previous.name { fields.name = stored.name }
        if fields.email == previous.email { fields.email = stored.email }
        if fields.bio == previous.bio { fields.bio = stored.bio }
        if fields.notificationsEnabled == previous.notificationsEnabled { fields.notificationsEnabled = stored.notificationsEnabled }
    }

    @discardableResult
    private func startLoad() -> Task<Bool, Never> {
        load.start(phase: .init(get: { [weak self] in self?.phase }, set: { [weak self] in self?.phase = $0 })) {
            [weak self, accounts, accountId = session.account?.id] in
            do {
                guard let accountId else { throw ShopError.signInRequired("see your profile") }
                let account = try await accounts.account(id: accountId)
                guard let self, !Task.isCancelled, self.session.account?.id == accountId else { return false }
                self.show(account, replacingDraft: true)
                self.phase = .loaded
            } catch {
                guard let self, !Task.isCancelled, let info = Failure.loadError(error) else { return false }
                self.saved = nil
                self.fields = ProfileFields()
                self.touched = []
                self.phase = .failed(info)
            }
            return true
        }
    }

    // MARK: Feed

    private func handle(_ event: ShopEvent) {
        switch event {
        case .accountChanged(let account) where account.id == saved?.id:
            show(account, replacingDraft: false)
        case .sessionChanged:
            savePhase = .idle
            events.track(startLoad())
        case .resync where phase == .loaded:
            events.track(Task { [weak self, accounts, accountId = saved?.id] in
                guard let accountId, let account = try? await accounts.account(id: accountId), !Task.isCancelled else { return }
                self?.show(account, replacingDraft: false)
            })
        default:
            break
        }
    }
}

/// A text field of the profile.
public enum ProfileField: String, Codable, CaseIterable, Sendable {
    case name, email, bio
}
