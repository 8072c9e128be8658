/// A JSON value held entirely in Swift.
///
/// Parsing and serialising go through jansson (see `JSONValue+Jansson.swift`); every other module works
/// with this enum and never sees a `json_t*`. Objects are unordered dictionaries; serialisation sorts
/// their keys so that output is deterministic.
public enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without a fraction or exponent that fits in 64 bits.
    case integer(Int64)
    /// Any other number.
    case double(Double)
    /// A string (which may contain NUL characters).
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])
}

extension JSONValue {
    /// The object's members, or `nil` when this is not an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The array's elements, or `nil` when this is not an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The string, or `nil` when this is not a string.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The integer, or `nil` when this is not an integer.
    public var integerValue: Int64? {
        if case .integer(let integer) = self { return integer }
        return nil
    }

    /// The boolean, or `nil` when this is not a boolean.
    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member named `key` when this is an object; `nil` otherwise or when absent.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The JSON type's name as JSON Schema spells it (`"object"`, `"integer"`, ...), for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil` as `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer literal.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array literal.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A dictionary literal; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact serialisation, for logs and test failures.
    public var description: String { serializedString() }
}
