import GRDB

/// Tells whether a product's text matches a search as the full-text index would, by reading the text with
/// the index's own tokenizer: each searchable word is a phrase (its tokens in a row, within the name or
/// within the description), every phrase must match, and the last token of the last phrase matches as a
/// prefix, which is what ``ProductSearch/filter(for:)`` asks of the index.
///
/// It lets a search walk products in page order and test each one, instead of first collecting every match
/// from the index: with a dense search (one letter, at a million products) collecting the matches was most
/// of the time.
///
/// ```swift
/// let matcher = try ProductTextMatcher("oak sh", tokenizer: db.makeTokenizer(ProductSearch.tokenizer))
/// try matcher?.matches(name: "Rustic Oak Shelf", description: "…")   // true
/// ```
struct ProductTextMatcher {
    /// Each phrase's tokens, as UTF-8 bytes.
    private let phrases: [[[UInt8]]]
    private let tokenizer: any FTS5Tokenizer

    /// A matcher for the searchable words of `text`; nil when there are none, or when a word reads as no
    /// token (the index's query language decides what such a phrase means, so the caller asks the index).
    /// - Throws: A database error when the tokenizer fails.
    init?(_ text: String, tokenizer: any FTS5Tokenizer) throws {
        let words = ProductSearch.searchableWords(in: text)
        guard !words.isEmpty else { return nil }
        var phrases: [[[UInt8]]] = []
        for word in words {
            let tokens = try tokenizer.tokenize(query: String(word)).map { Array($0.token.utf8) }
            guard !tokens.isEmpty else { return nil }
            phrases.append(tokens)
        }
        self.phrases = phrases
        self.tokenizer = tokenizer
    }

    /// The prefix a search for one short word asks for (`"a"` → `a`, `"Ét"` → `et`), when it has at most
    /// `longest` characters; else nil.
    func shortPrefix(longest: Int) -> String? {
        guard phrases.count == 1, phrases[0].count == 1, let token = String(validating: phrases[0][0], as: UTF8.self),
              token.unicodeScalars.count <= longest
        else { return nil }
        return token
    }

    /// Whether a product named `name` with `description` matches.
    /// - Throws: A database error when the tokenizer fails.
    func matches(name: String, description: String) throws -> Bool {
        let columns = [try tokens(of: name), try tokens(of: description)]
        for (index, phrase) in phrases.enumerated() {
            let isLast = index == phrases.count - 1
            guard columns.contains(where: { Self.contains($0, phrase, prefixAtEnd: isLast) }) else { return false }
        }
        return true
    }

    /// `text`'s tokens as the index stores them. ASCII text is read here, as the tokenizer reads it (letters
    /// and digits make tokens, folded to lower case; anything else separates them), which is ~30 times
    /// cheaper than a call through the tokenizer; other text goes through the tokenizer.
    private func tokens(of text: String) throws -> [[UInt8]] {
        var text = text
        if let tokens = text.withUTF8(Self.asciiTokens) { return tokens }
        return try tokenizer.tokenize(document: text).map { Array($0.token.utf8) }
    }

    /// The tokens of `bytes` when they are all ASCII, else nil.
    static func asciiTokens(_ bytes: UnsafeBufferPointer<UInt8>) -> [[UInt8]]? {
        var tokens: [[UInt8]] = []
        var token: [UInt8] = []
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): token.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): token.append(byte + 32)
            case 0x80...: return nil
            default:
                if !token.isEmpty {
                    tokens.append(token)
                    token.removeAll(keepingCapacity: true)
                }
            }
        }
        if !token.isEmpty { tokens.append(token) }
        return tokens
    }

    /// Whether `tokens` holds `phrase` at consecutive positions; with `prefixAtEnd`, the phrase's last token
    /// need only begin a token.
    static func contains(_ tokens: [[UInt8]], _ phrase: [[UInt8]], prefixAtEnd: Bool) -> Bool {
        guard tokens.count >= phrase.count else { return false }
        starts: for start in 0...(tokens.count - phrase.count) {
            for (offset, wanted) in phrase.enumerated() {
                let token = tokens[start + offset]
                let isPrefix = prefixAtEnd && offset == phrase.count - 1
                if isPrefix ? !token.starts(with: wanted) : token != wanted { continue starts }
            }
            return true
        }
        return false
    }
}
