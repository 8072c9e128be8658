/// An optional snapshot field that encodes `nil` as an explicit `null` (synthesized `Codable` would
/// leave the key out), so every field of the wire contract is always present.
@propertyWrapper
public struct ExplicitNull<Wrapped: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    /// The value, or `nil` for `null`.
    public var wrappedValue: Wrapped?

    /// Wraps a value.
    public init(wrappedValue: Wrapped?) {
        self.wrappedValue = wrappedValue
    }

    /// Decodes the value or `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Wrapped.self)
    }

    /// Encodes the value, or `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    /// Decodes a missing key as `nil` too.
    public func decode<Wrapped>(_ type: ExplicitNull<Wrapped>.Type, forKey key: Key) throws -> ExplicitNull<Wrapped> {
        try decodeIfPresent(type, forKey: key) ?? ExplicitNull(wrappedValue: nil)
    }
}
