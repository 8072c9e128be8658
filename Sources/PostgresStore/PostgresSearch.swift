import ShopStore

/// Product search on PostgreSQL, with the SQLite store's semantics (FTS5, tokenizer `unicode61
/// remove_diacritics 2`, the query built by `ProductSearch`), built from what the engine offers: a
/// `tsvector` of each product's tokens with their positions, kept in a stored generated column with a GIN
/// index, and a `tsquery` of phrases.
///
/// **Tokens.** A token is a run of letters and digits; anything else separates tokens. Text is folded as
/// unicode61 folds it: to lower case, with the accents of Latin letters removed (`É` → `e`, `ñ` → `n`) and
/// combining accents dropped wherever they are, while other letters keep theirs (Cyrillic `й` and `ё`,
/// Greek `ά`) and ligatures stay single letters (`æ`, `œ`, `ß` do not become `ae`, `oe`, `ss`). A run of
/// CJK characters without spaces is one token, as in SQLite (neither engine splits words there). The
/// `unaccent` extension is not used: it also expands ligatures (`ß` → `ss`) and strips Greek and Cyrillic
/// accents, so its searches would find other products than SQLite's. Letters and digits are ICU's
/// (collation `und-x-icu`), with the fractions, superscripts and Roman numerals of Latin-1 and Number
/// Forms (`½`, `²`, `Ⅻ`), which unicode61 also counts: so tokens do not depend on the database's locale
/// (in the C locale, PostgreSQL's own classes know only ASCII letters). This needs a server built with
/// ICU and a UTF-8 database (`normalize` requires one).
///
/// **Matching.** A search text is split at whitespace into words; words without a letter or digit are
/// dropped, and text made only of such words matches nothing (``filter(for:)``, the SQLite store's rules).
/// Each word is a phrase: its tokens in a row, within the name or within the description (positions skip
/// one between the two, so a phrase never spans them). Every phrase must match; the last token of the last
/// word matches as a prefix, the others exactly (`oak sh` finds "Oak Shelf", `oa sh` does not). A word
/// that folds to no token is left out of the search, as FTS5 leaves out an empty phrase. Results are in
/// the page's sort order, and the total counts every match, as in SQLite.
///
/// The words reach the database as one bound `text[]` parameter; `storefront_search_query` folds them
/// with the same SQL expression that folded the products (``tokens(of:)``), so a search can never disagree
/// with the index about what a token is, and builds the `tsquery` from tokens that hold only letters and
/// digits: user text never reaches SQL or the `tsquery` syntax.
enum PostgresSearch {
    /// What a search text asks for.
    enum Filter: Equatable {
        /// No text: every product.
        case everything
        /// Text without a letter or digit: nothing can match it.
        case nothing
        /// Words (at least one), each with a letter or digit, to bind for `storefront_search_query`.
        case words([String])
    }

    /// The filter for what a user typed: the words `ProductSearch` would turn into FTS5 phrases.
    static func filter(for text: String) -> Filter {
        switch ProductSearch.filter(for: text) {
        case .everything: .everything
        case .nothing: .nothing
        case .match: .words(ProductSearch.searchableWords(in: text).map(String.init))
        }
    }

    /// The longest token kept, in characters: longer ones are cut, in products and searches alike, to stay
    /// within PostgreSQL's 2 046 bytes per lexeme (500 characters are at most 2 000 bytes). A product never
    /// holds a longer one (a description has at most 500 characters); a search may.
    static let longestToken = 500

    /// Migration `v7-search-counts` on PostgreSQL: the functions, the column `searchVector` and its index.
    ///
    /// The column costs each product write ~40 µs of folding (~4 s more to seed 100 000 products).
    /// `storefront_search_vector` is PL/pgSQL because it is the cheaper way to number tokens (a set-returning
    /// subquery in a SQL function costs twice as much per product). Its body calls only built-in functions,
    /// so a restore (which computes generated columns with `search_path` set to `pg_catalog`) finds them.
    /// `storefront_search_query`, a SQL function with a standard body, binds its call of
    /// `storefront_search_tokens` when it is created.
    static let migrationSQL = """
        CREATE FUNCTION storefront_search_tokens(source text) RETURNS text[]
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN \(tokens(of: "source"));

        CREATE FUNCTION storefront_search_vector(name text, description text) RETURNS tsvector
            LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
            AS $$
            DECLARE
                -- '|' marks the border between the columns: it is never a token (not a letter or digit),
                -- and the position it takes keeps the description's first token from following the name's last.
                tokens text[] := \(tokens(of: "name")) || '{|}'::text[] || \(tokens(of: "description"));
                located text := '';
            BEGIN
                FOR place IN 1 .. cardinality(tokens) LOOP
                    IF tokens[place] <> '|' THEN
                        -- Tokens hold only letters and digits: nothing in them needs quoting.
                        located := located || ' ''' || left(tokens[place], \(longestToken)) || ''':' || place;
                    END IF;
                END LOOP;
                RETURN located::tsvector;
            END
            $$;

        CREATE FUNCTION storefront_search_query(words text[]) RETURNS tsquery
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN (
                SELECT string_agg(phrase, ' & ' ORDER BY number)::tsquery
                FROM (
                    SELECT number,
                           (SELECT string_agg('''' || left(token, \(longestToken)) || '''', ' <-> ' ORDER BY place)
                            FROM unnest(storefront_search_tokens(word)) WITH ORDINALITY AS t(token, place))
                           || CASE WHEN number = cardinality(words) THEN ':*' ELSE '' END AS phrase
                    FROM unnest(words) WITH ORDINALITY AS w(word, number)
                ) AS phrases
                WHERE phrase IS NOT NULL);

        ALTER TABLE product ADD COLUMN searchVector tsvector
            GENERATED ALWAYS AS (storefront_search_vector(name, description)) STORED;
        CREATE INDEX product_search ON product USING gin (searchVector);
        """

    /// The SQL expression of the tokens of `text` (a SQL expression of type `text`), in order, as
    /// ``PostgresSearch`` describes them: an array of lower-case runs of letters and digits.
    ///
    /// ASCII text (the common case) has no accents to remove: it is only lowered, which saves a third of
    /// the work. Other text loses its combining accents (U+0300 to U+036F, as unicode61 drops them), is
    /// lowered, decomposed (NFD) to strip the accents that follow a Latin letter, and composed again (NFC)
    /// so that other letters keep theirs. The split then keeps ICU's letters and digits and the other
    /// numbers unicode61 counts.
    static func tokens(of text: String) -> String {
        #"""
        array_remove(regexp_split_to_array(
                CASE WHEN octet_length(\#(text)) = char_length(\#(text)) THEN lower(\#(text) COLLATE "und-x-icu")
                ELSE normalize(regexp_replace(
                    normalize(lower(regexp_replace(\#(text), '[\u0300-\u036f]+', '', 'g') COLLATE "und-x-icu"), NFD),
                    '(?<=[a-z\u00c0-\u024f\u1e00-\u1eff])[\u0300-\u036f]+', '', 'g'), NFC)
                END,
                '[^[:alnum:]\u00b2\u00b3\u00b9\u00bc-\u00be\u2150-\u2189]+'), '')
        """#
    }
}
