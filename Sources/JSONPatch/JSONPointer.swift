import JSON

/// An RFC 6901 JSON Pointer: a path of reference tokens into a JSON document.
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
    /// The unescaped reference tokens, outermost first. Empty for the whole document.
    public var tokens: [String]

    /// The pointer to the whole document.
    public static let root = JSONPointer(tokens: [])

    /// A pointer from unescaped tokens.
    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// Parses the string form (`""`, `"/lines/0/quantity"`).
    ///
    /// - Throws: ``JSONPatchError/invalidPointer(_:)`` when a non-empty pointer does not start with `/`
    ///   or has a `~` not followed by `0` or `1`.
    public init(_ text: String) throws(JSONPatchError) {
        guard !text.isEmpty else {
            self.tokens = []
            return
        }
        guard text.hasPrefix("/") else { throw .invalidPointer(text) }
        var tokens = [String]()
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var iterator = raw.makeIterator()
            while let character = iterator.next() {
                guard character == "~" else {
                    token.append(character)
                    continue
                }
                switch iterator.next() {
                case "0": token.append("~")
                case "1": token.append("/")
                default: throw .invalidPointer(text)
                }
            }
            tokens.append(token)
        }
        self.tokens = tokens
    }

    /// This pointer extended by one token.
    public func appending(_ token: String) -> JSONPointer {
        JSONPointer(tokens: tokens + [token])
    }

    /// This pointer extended by an array index.
    public func appending(_ index: Int) -> JSONPointer {
        appending(String(index))
    }

    /// The escaped string form.
    public var description: String {
        tokens.map { "/" + $0.replacingTildeAndSlash() }.joined()
    }
}

extension String {
    func replacingTildeAndSlash() -> String {
        // Looked for byte by byte: `contains("~")` takes the generic substring search (~1k instructions).
        guard utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return self }
        var escaped = ""
        for character in self {
            switch character {
            case "~": escaped += "~0"
            case "/": escaped += "~1"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
