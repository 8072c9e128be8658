import Foundation
import GRDB

/// Full-text search over product names and descriptions with SQLite FTS5.
///
/// The index `product_fts` is an external-content FTS5 table over `product`, kept in step by triggers.
/// User text never reaches SQL or the FTS5 query language unescaped: ``matchExpression(for:)`` turns
/// it into quoted FTS5 strings, and the result is bound as a statement parameter.
package enum ProductSearch {
    static let createIndexSQL = """
        CREATE VIRTUAL TABLE product_fts USING fts5(
            name, description, content='product', content_rowid='seq', prefix='1 2 3',
            tokenize='unicode61 remove_diacritics 2'
        );
        """

    /// The triggers that keep the index in step with `product`, and count every change of a product's text
    /// in `search_text_version` (see ``SearchPrefixCounts``). A change of other columns (a price, the stock)
    /// leaves the index alone.
    static let createTriggersSQL = """
        CREATE TRIGGER product_fts_insert AFTER INSERT ON product BEGIN
            INSERT INTO product_fts(rowid, name, description) VALUES (new.seq, new.name, new.description);
            UPDATE search_text_version SET version = version + 1;
        END;
        CREATE TRIGGER product_fts_delete AFTER DELETE ON product BEGIN
            INSERT INTO product_fts(product_fts, rowid, name, description)
                VALUES ('delete', old.seq, old.name, old.description);
            UPDATE search_text_version SET version = version + 1;
        END;
        CREATE TRIGGER product_fts_update AFTER UPDATE OF name, description ON product
        WHEN old.name IS NOT new.name OR old.description IS NOT new.description BEGIN
            INSERT INTO product_fts(product_fts, rowid, name, description)
                VALUES ('delete', old.seq, old.name, old.description);
            INSERT INTO product_fts(rowid, name, description) VALUES (new.seq, new.name, new.description);
            UPDATE search_text_version SET version = version + 1;
        END;
        """

    /// The triggers as the first schema created them (migration history: the catalog seeded by
    /// `v1-demo-catalog` fires these; `v7-search-counts` replaces them with ``createTriggersSQL``).
    static let version1TriggersSQL = """
        CREATE TRIGGER product_fts_insert AFTER INSERT ON product BEGIN
            INSERT INTO product_fts(rowid, name, description) VALUES (new.seq, new.name, new.description);
        END;
        CREATE TRIGGER product_fts_delete AFTER DELETE ON product BEGIN
            INSERT INTO product_fts(product_fts, rowid, name, description)
                VALUES ('delete', old.seq, old.name, old.description);
        END;
        CREATE TRIGGER product_fts_update AFTER UPDATE OF name, description ON product BEGIN
            INSERT INTO product_fts(product_fts, rowid, name, description)
                VALUES ('delete', old.seq, old.name, old.description);
            INSERT INTO product_fts(rowid, name, description) VALUES (new.seq, new.name, new.description);
        END;
        """

    /// The index's tokenizer (as `createIndexSQL` names it), for reading text as the index reads it.
    static let tokenizer = FTS5TokenizerDescriptor(components: ["unicode61", "remove_diacritics", "2"])

    /// What a search text asks for.
    package enum Filter: Equatable {
        /// No text: every product.
        case everything
        /// Text without a letter or digit: nothing can match it.
        case nothing
        /// An FTS5 query, to bind as a parameter of `MATCH`.
        case match(String)
    }

    /// The filter for what a user typed.
    ///
    /// The text is split at whitespace and control characters (the index's tokenizer separates words at both;
    /// a NUL inside an FTS5 string would end it early); words without a letter or digit are dropped (they cannot
    /// match anything). Each word becomes an FTS5 string, with `"` doubled, so operators such as
    /// `NEAR`, `OR`, `-`, `*` or `:` are searched for as text; the words must all match (implicit AND),
    /// and the last one matches as a prefix, so results appear while the user is typing.
    ///
    /// ```swift
    /// filter(for: #"oak "shelf"#)   // .match(#""oak" """shelf"*"#)
    /// ```
    package static func filter(for text: String) -> Filter {
        let words = text.split(whereSeparator: separatesWords)
        if words.isEmpty { return .everything }
        let searchable = searchableWords(in: text)
        if searchable.isEmpty { return .nothing }
        let quoted = searchable.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        return .match(quoted.joined(separator: " ") + "*")
    }

    /// The words of `text` that can match something (those with a letter or digit), in order: each is one
    /// phrase of the search.
    package static func searchableWords(in text: String) -> [Substring] {
        text.split(whereSeparator: separatesWords).filter { $0.contains { $0.isLetter || $0.isNumber } }
    }

    /// Whether `character` separates the words of a search: whitespace, or a control character (U+0000–U+001F,
    /// U+007F–U+009F).
    private static func separatesWords(_ character: Character) -> Bool {
        character.isWhitespace || character.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
