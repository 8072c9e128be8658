import GRDB
import Shop

/// How many products each search of one or two characters (`"a"*`: every product with a word starting with
/// `a`) matches, kept in the database beside the catalog's text version they are exact for; and, for each, how
/// far along the name order its first page lies.
///
/// Why: the page a search shows states its total, and the index counts a short prefix's matches at about
/// 40 ns each: 43 ms for `a` at a million products, against a goal of 15 ms for the whole answer; and a search
/// whose total is known can find its page by walking products in page order (see ``ProductPageReader``)
/// instead of collecting every match. A longer search matches few enough products to be counted at once.
///
/// How they stay exact: the index's triggers count every change of a product's text in
/// `search_text_version.version`; the one-letter counts are used only while `counted` equals it, the two-letter
/// ones while `counted_two_letters` does. The writes that change product text (a product created, edited or
/// deleted) apply their change to the counts and mark them exact again; a change made any other way (the
/// `sqlite3` shell, say) leaves them stale, and searches count in the index until the next ``recount(_:)`` (a
/// seed, or a migration). A server from before `v12-search-counts-two-letters` writing to the file keeps the
/// one-letter counts and marks only `counted`: the two-letter counts it did not keep go unused.
///
/// The walk's depth (`name_walk_steps`) is a hint, not kept exact: the products a walk in name order passes
/// until it has a page (``walkHintMatches``) of a prefix's matches, measured by ``recount(_:)``. A two-letter
/// prefix's matches can lie anywhere along the name order (at a million products `"la"` fills its page within
/// 80 products, `"st"` needs 5 000), so a two-letter search walks only where the hint says the walk is short;
/// a hint made stale by later writes costs time (the walk gives up and the matches are collected), never a
/// wrong page.
enum SearchPrefixCounts {
    /// The longest prefix kept, in characters (Unicode scalars, as SQLite's `substr` counts them). One letter
    /// matches densely enough for a walk to pay every time; two letters walk only where the hint says so (two
    /// letters walking by the count alone took `"st"` at a million products from 15 to 22–32 ms: its walk
    /// gave up, then collected).
    static let longestPrefix = 2

    /// The matches a walk's hint is measured for: a page of the catalog screen (its first page, 20 products).
    static let walkHintMatches = 20

    /// What is kept for a prefix.
    struct Kept: Equatable {
        /// The products matching it (exact).
        var products: Int
        /// The products a walk in name order (``ProductPageReader/byName``) passes until it has found
        /// ``walkHintMatches`` matches, as measured by the last recount (a hint); nil when not measured: the
        /// recount walks only as far as a walk could pay for the most frequent prefix, and a prefix newer than
        /// the recount has none.
        var nameWalkSteps: Int?
    }

    /// Migration `v7-search-counts`: the tables, and the index's triggers that count text changes (the counts
    /// themselves are made by `v12-search-counts-two-letters`).
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE search_text_version (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                version INTEGER NOT NULL,
                counted INTEGER NOT NULL
            );
            INSERT INTO search_text_version (id, version, counted) VALUES (1, 0, -1);
            CREATE TABLE search_prefix_count (
                prefix TEXT PRIMARY KEY NOT NULL,
                products INTEGER NOT NULL CHECK (products > 0)
            ) WITHOUT ROWID;
            CREATE VIRTUAL TABLE product_fts_terms USING fts5vocab(product_fts, 'row');
            DROP TRIGGER product_fts_insert;
            DROP TRIGGER product_fts_delete;
            DROP TRIGGER product_fts_update;
            """)
        try db.execute(sql: ProductSearch.createTriggersSQL)
        // Counted by `v12-search-counts-two-letters`, which runs next on any database that runs this one.
    }

    /// Migration `v12-search-counts-two-letters`: the two-letter counts' own mark of exactness, the walk's hint,
    /// and every count again (two letters now).
    static func migrateTwoLetters(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE search_text_version ADD COLUMN counted_two_letters INTEGER NOT NULL DEFAULT -1;
            ALTER TABLE search_prefix_count ADD COLUMN name_walk_steps INTEGER;
            """)
        try recount(db)
    }

    /// The products matching a search for `prefix` (one token of at most ``longestPrefix`` characters, as
    /// the index's tokenizer reads it), when the counts are exact for the catalog's text as it is; nil
    /// otherwise.
    static func products(_ db: Database, prefix: String) throws -> Int? {
        try kept(db, prefix: prefix)?.products
    }

    /// What is kept for `prefix` (as ``products(_:prefix:)`` reads it), with the walk's hint.
    static func kept(_ db: Database, prefix: String) throws -> Kept? {
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT v.version = v.counted, v.version = v.counted_two_letters, c.products, c.name_walk_steps
            FROM search_text_version v LEFT JOIN search_prefix_count c ON c.prefix = ?
            """), arguments: [prefix])
        guard let row, row[prefix.unicodeScalars.count < 2 ? 0 : 1] as Bool? == true else { return nil }
        let products: Int? = row[2]  // NULL: no product has a word with that prefix
        return Kept(products: products ?? 0, nameWalkSteps: row[3])
    }

    /// The text version, and the versions the one- and two-letter counts are exact for.
    static func versions(_ db: Database) throws -> (version: Int64, counted: Int64, countedTwoLetters: Int64) {
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT version, counted, counted_two_letters FROM search_text_version"))
        return (row?[0] ?? 0, row?[1] ?? -1, row?[2] ?? -1)
    }

    /// Counts every prefix again in the index: the counts are then exact for the catalog's text as it is.
    static func recount(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM search_prefix_count")
        // The vocabulary is read once (each read walks the whole index: ~0.6 s at a million products); the
        // shorter prefixes are those of the longest. Keyed by scalars, as SQLite compares text.
        var scalarPrefixes = Set<[Unicode.Scalar]>()
        for longest in try String.fetchAll(db, sql: "SELECT DISTINCT substr(term, 1, \(longestPrefix)) FROM product_fts_terms") {
            scalarPrefixes.formUnion(leadingPrefixes(of: longest.unicodeScalars))
        }
        let prefixes = scalarPrefixes.map(text(of:))
        let count = try db.makeStatement(sql: "SELECT count(*) FROM product_fts WHERE product_fts MATCH ?")
        let insert = try db.makeStatement(sql: "INSERT INTO search_prefix_count (prefix, products) VALUES (?, ?)")
        for prefix in prefixes {
            let products = try Int.fetchOne(count, arguments: ["\"" + prefix.replacingOccurrences(of: "\"", with: "\"\"") + "\"*"]) ?? 0
            if products > 0 { try insert.execute(arguments: [prefix, products]) }
        }
        try measureNameWalks(db)
        try db.execute(sql: "UPDATE search_text_version SET counted = version, counted_two_letters = version")
    }

    /// Walks the catalog in name order, testing each product's text as the index reads it, and records for
    /// each counted prefix after how many products it had ``walkHintMatches`` matches. The walk stops where no
    /// prefix could still gain from walking: past the largest count divided by the steps a collected match is
    /// worth (``ProductPageReader/textWalkStepsPerCollectedMatch``); at a million products 25 000 steps (`a` matches
    /// every product), ~0.1 s.
    private static func measureNameWalks(_ db: Database) throws {
        let largest = try Int.fetchOne(db, sql: "SELECT MAX(products) FROM search_prefix_count") ?? 0
        let stepLimit = largest / ProductPageReader.textWalkStepsPerCollectedMatch
        guard stepLimit > 0 else { return }
        let tokenizer = try db.makeTokenizer(ProductSearch.tokenizer)
        var found: [[Unicode.Scalar]: Int] = [:]
        var steps: [[Unicode.Scalar]: Int] = [:]
        var walked = 0
        try DirectStatement(db, "SELECT p.name, p.description FROM product p ORDER BY \(ProductPageReader.byName) LIMIT ?")
            .forEachRow([.integer(Int64(stepLimit))]) { row in
                walked += 1
                for prefix in try prefixes(of: ProductText(name: row.text(0), description: row.text(1)), tokenizer) {
                    let matches = found[prefix, default: 0] + 1
                    found[prefix] = matches
                    if matches == walkHintMatches { steps[prefix] = walked }
                }
                return true
            }
        let update = try db.makeStatement(sql: "UPDATE search_prefix_count SET name_walk_steps = ? WHERE prefix = ?")
        for (scalars, count) in steps {
            try update.execute(arguments: [count, text(of: scalars)])
        }
    }

    /// Applies changes of product text made in this transaction since the text version was `before`: for
    /// each product, its text before (nil: created) and after (nil: deleted), as stored. When the counts were
    /// exact before and the changes are all the index counted since, they are exact after; otherwise they
    /// stay stale. Two-letter counts that were stale before (an older server wrote since) stay stale.
    static func textsChanged(_ db: Database, since before: Int64, _ changes: [(old: ProductText?, new: ProductText?)]) throws {
        let now = try versions(db)
        let counted = changes.filter { $0.old != $0.new }.count
        guard now.counted == before, now.version - before == counted, counted > 0 else { return }
        let keepsTwoLetters = now.countedTwoLetters == before
        let tokenizer = try db.makeTokenizer(ProductSearch.tokenizer)
        // Keyed by scalars, as SQLite compares text (Swift's String equality would merge canonically
        // equivalent characters, which the index keeps apart).
        var delta: [[Unicode.Scalar]: Int] = [:]
        for change in changes where change.old != change.new {
            let old = try change.old.map { try prefixes(of: $0, tokenizer) } ?? []
            let new = try change.new.map { try prefixes(of: $0, tokenizer) } ?? []
            for prefix in old.subtracting(new) { delta[prefix, default: 0] -= 1 }
            for prefix in new.subtracting(old) { delta[prefix, default: 0] += 1 }
        }
        for (scalars, change) in delta where change != 0 && (scalars.count < 2 || keepsTwoLetters) {
            let prefix = text(of: scalars)
            let products = (try Int.fetchOne(db, sql: "SELECT products FROM search_prefix_count WHERE prefix = ?", arguments: [prefix]) ?? 0) + change
            if products > 0 {
                try db.execute(sql: """
                    INSERT INTO search_prefix_count (prefix, products) VALUES (?, ?)
                    ON CONFLICT (prefix) DO UPDATE SET products = excluded.products
                    """, arguments: [prefix, products])
            } else {
                try db.execute(sql: "DELETE FROM search_prefix_count WHERE prefix = ?", arguments: [prefix])
            }
        }
        try db.execute(
            sql: "UPDATE search_text_version SET counted = version, counted_two_letters = CASE WHEN ? THEN version ELSE counted_two_letters END",
            arguments: [keepsTwoLetters])
    }

    /// The prefixes (of 1 to ``longestPrefix`` characters) of the tokens of a product's text, as the index
    /// reads them.
    static func prefixes(of text: ProductText, _ tokenizer: any FTS5Tokenizer) throws -> Set<[Unicode.Scalar]> {
        var prefixes = Set<[Unicode.Scalar]>()
        for column in [text.name, text.description] {
            for (token, _) in try tokenizer.tokenize(document: column) {
                prefixes.formUnion(leadingPrefixes(of: token.unicodeScalars))
            }
        }
        return prefixes
    }

    /// The prefixes of 1 to ``longestPrefix`` scalars of `scalars` (fewer when it is shorter).
    static func leadingPrefixes(of scalars: some Sequence<Unicode.Scalar>) -> [[Unicode.Scalar]] {
        let kept = Array(scalars.prefix(longestPrefix))
        return kept.indices.map { Array(kept[...$0]) }
    }

    /// A prefix kept as scalars, as text (appended scalar by scalar: a `String` made otherwise could be
    /// normalised, and SQLite compares the scalars).
    static func text(of scalars: [Unicode.Scalar]) -> String {
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        return text
    }
}

/// The text of a product that the search index reads.
struct ProductText: Equatable, Sendable {
    var name: String
    var description: String

    /// Equal as SQLite compares text: byte for byte (not up to canonical equivalence, as Swift's `==` on
    /// strings would be).
    static func == (left: ProductText, right: ProductText) -> Bool {
        left.name.utf8.elementsEqual(right.name.utf8) && left.description.utf8.elementsEqual(right.description.utf8)
    }
}

extension ProductText {
    /// `product`'s text.
    init(_ product: Product) {
        self.init(name: product.name, description: product.description)
    }

    /// The text of product `id` as stored (a string is stored up to its first NUL character), or nil.
    static func stored(_ db: Database, id: String) throws -> ProductText? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT name, description FROM product WHERE id = ?"), arguments: [id])
            .map { ProductText(name: $0[0], description: $0[1]) }
    }
}
