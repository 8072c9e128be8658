/// An enum whose raw values are its wire names, decoded with an error that lists the allowed values.
///
/// The synthesized `RawRepresentable` decoding says only "Cannot initialize X from invalid String value y";
/// a front-end developer needs the values the server takes. Conforming types call ``init(wireFrom:)``
/// from their `init(from:)`.
public protocol WireEnum: RawRepresentable<String>, CaseIterable, Sendable {}

extension WireEnum {
    /// The wire names, in declaration order.
    public static var wireNames: [String] { allCases.map(\.rawValue) }

    /// Decodes a wire name.
    /// - Throws: `DecodingError.dataCorrupted` saying "must be one of a, b, c, not "x"" for an unknown name,
    ///   or the decoder's type mismatch for a value that is not a string.
    public init(wireFrom decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let value = Self(rawValue: name) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "must be one of \(Self.wireNames.joined(separator: ", ")), not \"\(name)\"")
        }
        self = value
    }
}
