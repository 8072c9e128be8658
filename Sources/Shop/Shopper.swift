/// Whose cart, favourites and orders a service call reads or changes: a signed-in account, or a guest.
///
/// A server session starts as a guest with a random id of its own; signing in makes it the account's.
/// The shopper always comes from the server's session, never from a client's params, so no client can
/// name another shopper's data.
public enum Shopper: Hashable, Sendable, CustomStringConvertible {
    /// A signed-out session's own data, under a random id.
    case guest(String)
    /// A signed-in account's data.
    case account(Int64)

    /// The guest that a database from before accounts keeps its one cart, favourites and orders under,
    /// until the first account registered adopts them.
    public static let legacyGuest = Shopper.guest("legacy")

    /// How the shopper is stored in owner columns and change-log subjects: `g:<id>` or `a:<id>`.
    public var storageKey: String {
        switch self {
        case .guest(let id): "g:\(id)"
        case .account(let id): "a:\(id)"
        }
    }

    /// The shopper a storage key names, or nil when it names none.
    public init?(storageKey: String) {
        if storageKey.hasPrefix("g:") {
            self = .guest(String(storageKey.dropFirst(2)))
        } else if storageKey.hasPrefix("a:"), let id = Int64(storageKey.dropFirst(2)) {
            self = .account(id)
        } else {
            return nil
        }
    }

    /// The account, when signed in.
    public var accountId: Int64? {
        if case .account(let id) = self { id } else { nil }
    }

    public var description: String { storageKey }
}
