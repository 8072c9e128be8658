import Shop

/// Everything the profile screen shows, as one value.
public struct ProfileState: Codable, Equatable, Sendable {
    public var phase: PhaseName
    /// The load's failure (`signInRequired`'s message once signed out), or the last save's; `null` when none.
    @ExplicitNull public var error: ErrorInfo?
    /// Whose profile; `null` until loaded.
    @ExplicitNull public var accountId: Int64?
    /// The draft.
    public var fields: ProfileFields
    /// Messages of the invalid fields the user changed, by field name; after a refused save, of every
    /// invalid field.
    public var errors: [String: String]
    /// Whether the draft can be saved.
    public var isValid: Bool
    /// Whether the draft differs from the stored profile.
    public var hasChanges: Bool
    public var savePhase: SubmitPhaseName
}

/// The profile's editable values.
public struct ProfileFields: Codable, Equatable, Sendable {
    public var name = ""
    public var email = ""
    public var bio = ""
    public var notificationsEnabled = true

    init() {}

    init(_ account: Account) {
        name = account.name
        email = account.email
        bio = account.bio
        notificationsEnabled = account.notificationsEnabled
    }
}
