import JSON

/// A request's id, echoed exactly in its response: an integer or a string.
public enum RequestID: Hashable, Sendable, CustomStringConvertible {
    /// An integer id.
    case integer(Int64)
    /// A string id.
    case string(String)

    /// Reads an id; `nil` for any other JSON type (including `null` and fractional numbers).
    public init?(_ value: JSONValue) {
        switch value {
        case .integer(let integer): self = .integer(integer)
        case .string(let string): self = .string(string)
        default: return nil
        }
    }

    /// The id as JSON.
    public var jsonValue: JSONValue {
        switch self {
        case .integer(let integer): .integer(integer)
        case .string(let string): .string(string)
        }
    }

    /// `7` or `"abc"`, as on the wire.
    public var description: String { jsonValue.serializedString() }
}
