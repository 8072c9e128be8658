/// Everything the sign-up screen shows, as one value. The passwords are never in it.
public struct RegistrationState: Codable, Equatable, Sendable {
    /// The email as typed.
    public var email: String
    public var acceptedTerms: Bool
    /// Messages of the touched fields that were invalid at their last check, by field name (`email`,
    /// `password`, `confirmPassword`, `acceptedTerms`); after a refused `register`, of every invalid field.
    public var errors: [String: String]
    /// Fields changed within the last 300 ms, whose check is pending.
    public var checking: [String]
    /// Whether `register` would be sent: every field valid now (checked or not).
    public var isFormValid: Bool
    public var submitPhase: SubmitPhaseName
    /// The last registration's operational failure; `null` otherwise.
    @ExplicitNull public var error: ErrorInfo?
    /// Whether the session is signed in (registering then is refused).
    public var signedIn: Bool
}
