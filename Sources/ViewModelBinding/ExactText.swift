import JSON

/// Text taken with every character it has, U+0000 included, where `JSONValueDecoder` refuses that character in
/// other strings (it would be cut where SQLite binds the text): a password, hashed from its exact bytes and never
/// bound as text. An account registered with such a password before the rule must still sign in with it.
///
/// Its schema is a string's: the schema generator's recording decoder sees the `String` read.
struct ExactText: Decodable {
    /// The text.
    let text: String

    /// Decodes a string, U+0000 included.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        do {
            text = try container.decode(String.self)
        } catch DecodingError.dataCorrupted(let context) {
            // Only the refusal of U+0000 is waived: a string without one was refused for another reason.
            guard case .string(let text) = try container.decode(JSONValue.self), text.utf8.contains(0) else {
                throw DecodingError.dataCorrupted(context)
            }
            self.text = text
        }
    }
}
