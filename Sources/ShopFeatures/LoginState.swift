import Shop

/// Everything the sign-in screen shows, as one value. Never holds a password or a token.
public struct LoginState: Codable, Equatable, Sendable {
    public var phase: AuthPhase
    /// Who is signed in; `null` for a guest.
    @ExplicitNull public var user: AccountSummary?
    /// Why the last attempt failed, or why the last sign-in ended (signed out elsewhere, expired); `null`
    /// otherwise.
    @ExplicitNull public var message: String?
    /// Until when sign-ins for the email last tried are refused (too many failures); `null` otherwise.
    @ExplicitNull public var lockedUntil: Timestamp?
    /// Cart lines the sign-in's merge of the guest cart could not keep in full.
    public var cappedLines: [CappedLineSnapshot]
}

/// Who is signed in, as screens show it.
public struct AccountSummary: Codable, Equatable, Sendable {
    public var id: Int64
    public var email: String
    public var name: String

    init(_ account: Account) {
        id = account.id
        email = account.email
        name = account.name
    }
}

/// A merged cart line whose quantity was lowered to what can be ordered.
public struct CappedLineSnapshot: Codable, Equatable, Sendable {
    public var productId: String
    public var name: String
    /// The account's units plus the guest's.
    public var requested: Int
    /// The units kept (0: dropped, out of stock).
    public var kept: Int

    init(_ line: CappedLine) {
        productId = line.productId
        name = line.name
        requested = line.requested
        kept = line.kept
    }
}
