import GRDB
import Shop

/// How many products each search of one word of up to four characters (`"a"*`: every product with a word
/// starting with `a`) matches, kept in the database beside the catalog's text version they are exact for; and,
/// for each, where its first match lies in the name order and how far its first page reaches from there.
///
/// Why: the page a search shows states its total, and the index counts a short prefix's matches at about
/// 40 ns each: 43 ms for `a` at a million products, against a goal of 15 ms for the whole answer; and a search
/// whose total is known can find its page by walking products in page order (see ``ProductPageReader``)
/// instead of collecting every match. A longer word matches few enough products to be counted at once.
///
/// How they stay exact: the index's triggers count every change of a product's text in
/// `search_text_version.version`; the one-letter counts are used only while `counted` equals it, the two-letter
/// ones while `counted_two_letters` does, the three- and four-letter ones and the starts (below) while
/// `counted_with_starts` does. The writes that change product text (a product created, edited or deleted) apply
/// their change to the counts and mark them exact again; a change made any other way (the `sqlite3` shell, say)
/// leaves them stale, and searches count in the index until the next ``recount(_:)`` (a seed, or a migration).
/// A server from before `v12-search-counts-two-letters` writing to the file keeps the one-letter counts and
/// marks only `counted`, one from before `v13-search-walk-starts` keeps two letters too and marks
/// `counted_two_letters` as well: what it did not keep goes unused.
///
/// Where a walk in name order starts (`walk_start_name`, `walk_start_id`) is kept exact as a bound: no product
/// sorting before it matches the prefix. ``recount(_:)`` sets it to the prefix's first match in name order, and
/// a write that gives a product sorting before it a word with the prefix moves it to that product; a deletion
/// leaves it a bound. Matches can be bunched late in the name order: at a million products `"st"`'s first match
/// is the 5 018th product, and its page is full 20 products later.
///
/// The walk's depth (`name_walk_steps`) is a hint, not kept exact: the products a walk in name order passes,
/// from its start, until it has a page (``walkHintMatches``) of a prefix's matches, measured by ``recount(_:)``.
/// A prefix's matches can be spread thinly along the name order, so a search of two letters or more walks only
/// where the hint says the walk is short; a hint made stale by later writes costs time (the walk gives up and
/// the matches are collected), never a wrong page.
enum SearchPrefixCounts {
    /// The longest prefix kept, in characters (Unicode scalars, as SQLite's `substr` counts them). One letter
    /// matches densely enough for a walk to pay every time; longer ones walk only where the hint says so (two
    /// letters walking by the count alone took `"st"` at a million products from 15 to 22–32 ms: its walk
    /// gave up, then collected). Four letters cover the words typed before a search narrows (`"wool"`: 100 268
    /// matches at a million products, 10–16 ms collected, ~2 ms walked from its start); a recount at a million
    /// products enumerates 34 M matches for the 369 prefixes of up to four letters (2.5 s, against 1.5 s for two).
    static let longestPrefix = 4

    /// The matches a walk's hint is measured for: a page of the catalog screen (its first page, 20 products).
    static let walkHintMatches = 20

    /// What is kept for a prefix.
    struct Kept: Equatable {
        /// The products matching it (exact).
        var products: Int
        /// The products a walk in name order (``ProductPageReader/byName``) passes from ``nameWalkStart`` until
        /// it has found ``walkHintMatches`` matches, as measured by the last recount and kept an upper bound when a
        /// write moves the start (a hint); nil when not known: the prefix had fewer matches, is newer than the
        /// recount, its start moved too far back, the recount found the name positions impractical, or the
        /// starts are not kept.
        var nameWalkSteps: Int?
        /// Where a walk in name order may start: no product sorting before it matches (exact); nil when not
        /// known (the walk starts at the first product).
        var nameWalkStart: NameKey? = nil
    }

    /// A product's place in the name order (``ProductPageReader/byName``): its name, compared without ASCII
    /// case (`COLLATE NOCASE`), then its id.
    struct NameKey: Equatable, Sendable {
        var name: String
        var id: String
    }

    /// Migration `v7-search-counts`: the tables, and the index's triggers that count text changes (the counts
    /// themselves are made by `v13-search-walk-starts`).
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
        // Counted by `v13-search-walk-starts`, which runs after `v12-search-counts-two-letters` on any database that
        // runs this one.
    }

    /// Migration `v12-search-counts-two-letters`: the two-letter counts' own mark of exactness and the walk's hint
    /// (the counts themselves are made by `v13-search-walk-starts`, which runs next on any database that runs
    /// this one).
    static func migrateTwoLetters(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE search_text_version ADD COLUMN counted_two_letters INTEGER NOT NULL DEFAULT -1;
            ALTER TABLE search_prefix_count ADD COLUMN name_walk_steps INTEGER;
            """)
    }

    /// Migration `v13-search-walk-starts`: where each prefix's walk in name order starts, its own mark of
    /// exactness, and every count, start and hint made again (2.5 s at a million products, once).
    static func migrateWalkStarts(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE search_text_version ADD COLUMN counted_with_starts INTEGER NOT NULL DEFAULT -1;
            ALTER TABLE search_prefix_count ADD COLUMN walk_start_name TEXT;
            ALTER TABLE search_prefix_count ADD COLUMN walk_start_id TEXT;
            """)
        try recount(db)
    }

    /// The products matching a search for `prefix` (one token of at most ``longestPrefix`` characters, as
    /// the index's tokenizer reads it), when the counts are exact for the catalog's text as it is; nil
    /// otherwise.
    static func products(_ db: Database, prefix: String) throws -> Int? {
        try kept(db, prefix: prefix)?.products
    }

    /// What is kept for `prefix` (as ``products(_:prefix:)`` reads it), with the walk's start and hint (both
    /// nil while the starts are not kept: the hint counts from the start).
    static func kept(_ db: Database, prefix: String) throws -> Kept? {
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT v.version = v.counted, v.version = v.counted_two_letters, v.version = v.counted_with_starts,
                   c.products, c.name_walk_steps, c.walk_start_name, c.walk_start_id
            FROM search_text_version v LEFT JOIN search_prefix_count c ON c.prefix = ?
            """), arguments: [prefix])
        guard let row, row[min(prefix.unicodeScalars.count, 3) - 1] as Bool? == true else { return nil }
        let products: Int? = row[3]  // NULL: no product has a word with that prefix
        guard row[2] as Bool? == true else { return Kept(products: products ?? 0, nameWalkSteps: nil) }
        let start = (row[5] as String?).flatMap { name in (row[6] as String?).map { NameKey(name: name, id: $0) } }
        return Kept(products: products ?? 0, nameWalkSteps: row[4], nameWalkStart: start)
    }

    /// The text version, and the versions the one-letter counts, the two-letter ones, and the three- and
    /// four-letter ones with the walks' starts are exact for.
    static func versions(_ db: Database) throws -> (version: Int64, counted: Int64, countedTwoLetters: Int64, countedWithStarts: Int64) {
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT version, counted, counted_two_letters, counted_with_starts FROM search_text_version
            """))
        return (row?[0] ?? 0, row?[1] ?? -1, row?[2] ?? -1, row?[3] ?? -1)
    }

    /// Counts every prefix again in the index, and finds its walk's start and hint: they are then exact for the
    /// catalog's text as it is. Each prefix's matches are collected (~0.06 µs each) and their first
    /// ``walkHintMatches`` in name order picked by the name order's positions, read once here. Where the
    /// positions are impractical (seqs far past the catalog's size, or below 0) the prefixes are only counted:
    /// no starts, no hints.
    static func recount(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM search_prefix_count")
        // The vocabulary is read once (each read walks the whole index: ~0.6 s at a million products); the
        // shorter prefixes are those of the longest. Keyed by scalars, as SQLite compares text.
        var scalarPrefixes = Set<[Unicode.Scalar]>()
        for longest in try String.fetchAll(db, sql: "SELECT DISTINCT substr(term, 1, \(longestPrefix)) FROM product_fts_terms") {
            scalarPrefixes.formUnion(leadingPrefixes(of: longest.unicodeScalars))
        }
        let maximumSeq = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM product") ?? 0
        // Positions are kept empty where an array indexed by seqs is impractical (seqs far past the catalog's
        // size, or below 0): then every prefix is counted by the index, without a start or hint.
        let nameOrder = NameOrder()
        try nameOrder.read(db)
        let positions = nameOrder.positions(at: try NameOrder.Version.current(db))
        let key = try db.makeStatement(sql: "SELECT name, id FROM product WHERE seq = ?")
        let insert = try db.makeStatement(sql: """
            INSERT INTO search_prefix_count (prefix, products, name_walk_steps, walk_start_name, walk_start_id)
            VALUES (?, ?, ?, ?, ?)
            """)
        for prefix in scalarPrefixes.map(text(of:)) {
            let expression = "\"" + prefix.replacingOccurrences(of: "\"", with: "\"\"") + "\"*"
            guard let positions, !positions.ranks.isEmpty else {
                let products = try Int.fetchOne(db, sql: "SELECT count(*) FROM product_fts WHERE product_fts MATCH ?", arguments: [expression]) ?? 0
                if products > 0 { try insert.execute(arguments: [prefix, products, nil, nil, nil]) }
                continue
            }
            var matches = SeqSet(maximum: maximumSeq)
            try matches.collect(db, sql: "SELECT storefront_collect_rowids(?1, rowid) FROM product_fts WHERE product_fts MATCH ?2", text: expression)
            guard matches.count > 0 else { continue }
            let first = positions.first(walkHintMatches, of: matches) ?? []
            let start = try first.first.flatMap { try Row.fetchOne(key, arguments: [$0]) }
            let steps = first.count == walkHintMatches
                ? Int(positions.ranks[Int(first[first.count - 1])] - positions.ranks[Int(first[0])]) + 1 : nil
            try insert.execute(arguments: [prefix, matches.count, steps, start?[0] as String?, start?[1] as String?])
        }
        try db.execute(sql: "UPDATE search_text_version SET counted = version, counted_two_letters = version, counted_with_starts = version")
    }

    /// Applies changes of product text made in this transaction since the text version was `before`: for
    /// each product, its id and its text before (nil: created) and after (nil: deleted), as stored. When the
    /// counts were exact before and the changes are all the index counted since, they are exact after;
    /// otherwise they stay stale. Two-letter counts that were stale before (an older server wrote since) stay
    /// stale, and so do the three- and four-letter ones and the walks' starts; a product given a word with a
    /// prefix moves the prefix's start to itself when it sorts before it (``moveStart(_:of:to:isNew:)``).
    static func textsChanged(_ db: Database, since before: Int64, _ changes: [(id: String, old: ProductText?, new: ProductText?)]) throws {
        let now = try versions(db)
        let changes = changes.filter { $0.old != $0.new }
        guard now.counted == before, now.version - before == changes.count, !changes.isEmpty else { return }
        let keepsTwoLetters = now.countedTwoLetters == before
        let keepsStarts = keepsTwoLetters && now.countedWithStarts == before
        let tokenizer = try db.makeTokenizer(ProductSearch.tokenizer)
        // Keyed by scalars, as SQLite compares text (Swift's String equality would merge canonically
        // equivalent characters, which the index keeps apart).
        var delta: [[Unicode.Scalar]: Int] = [:]
        var given: [(start: NameKey, prefixes: Set<[Unicode.Scalar]>)] = []
        for change in changes {
            let old = try change.old.map { try prefixes(of: $0, tokenizer) } ?? []
            let new = try change.new.map { try prefixes(of: $0, tokenizer) } ?? []
            for prefix in old.subtracting(new) { delta[prefix, default: 0] -= 1 }
            for prefix in new.subtracting(old) { delta[prefix, default: 0] += 1 }
            // With a new name it may sort before the start of any prefix it has; else only of those it gained.
            if let text = change.new {
                let renamed = change.old.map { !$0.name.utf8.elementsEqual(text.name.utf8) } ?? true
                given.append((NameKey(name: text.name, id: change.id), renamed ? new : new.subtracting(old)))
            }
        }
        var created = Set<[Unicode.Scalar]>()
        let read = try db.cachedStatement(sql: "SELECT products FROM search_prefix_count WHERE prefix = ?")
        let write = try db.cachedStatement(sql: """
            INSERT INTO search_prefix_count (prefix, products) VALUES (?, ?)
            ON CONFLICT (prefix) DO UPDATE SET products = excluded.products
            """)
        let delete = try db.cachedStatement(sql: "DELETE FROM search_prefix_count WHERE prefix = ?")
        for (scalars, change) in delta where change != 0 && (scalars.count == 1 || (scalars.count == 2 ? keepsTwoLetters : keepsStarts)) {
            let prefix = text(of: scalars)
            let kept = try Int.fetchOne(read, arguments: [prefix])
            let products = (kept ?? 0) + change
            if products > 0 {
                try write.execute(arguments: [prefix, products])
                if kept == nil { created.insert(scalars) }
            } else {
                try delete.execute(arguments: [prefix])
            }
        }
        if keepsStarts {
            for (start, prefixes) in given {
                for scalars in prefixes {
                    try moveStart(db, of: text(of: scalars), to: start, isNew: created.contains(scalars))
                }
            }
        }
        try db.execute(sql: """
            UPDATE search_text_version SET counted = version,
                counted_two_letters = CASE WHEN ?1 THEN version ELSE counted_two_letters END,
                counted_with_starts = CASE WHEN ?2 THEN version ELSE counted_with_starts END
            """, arguments: [keepsTwoLetters, keepsStarts])
    }

    /// Moves `prefix`'s start back to `key`, a product with a word with the prefix, when it sorts before it
    /// (``ProductPageReader/byName``); a prefix no product had (`isNew`) starts at its first. An unknown start
    /// (NULL) stays unknown. The hint is kept an upper bound of the walk from the new start: the walk passes the
    /// products up to the old start, then what the old hint said; it is dropped when that is past what a walk
    /// could pay (the count over ``ProductPageReader/textWalkStepsPerCollectedMatch``), which is as far as the
    /// products between are counted (one letter's hint is not used: dropped).
    private static func moveStart(_ db: Database, of prefix: String, to key: NameKey, isNew: Bool) throws {
        let moving = try db.cachedStatement(sql: """
            SELECT walk_start_name, walk_start_id, name_walk_steps, products FROM search_prefix_count
            WHERE prefix = ?3 AND (
                (walk_start_name IS NULL AND ?4)
                OR ?1 < walk_start_name COLLATE NOCASE
                OR (?1 = walk_start_name COLLATE NOCASE AND ?2 < walk_start_id))
            """)
        guard let row = try Row.fetchOne(moving, arguments: [key.name, key.id, prefix, isNew]) else { return }
        var steps: Int? = nil
        if prefix.unicodeScalars.count > 1, let hint: Int = row[2], let oldName: String = row[0], let oldId: String = row[1] {
            let most = (row[3] as Int) / ProductPageReader.textWalkStepsPerCollectedMatch
            // The walk's seek, bounded above too: SQLite reads the name index between the two.
            let between = try Int.fetchOne(db.cachedStatement(sql: """
                SELECT count(*) FROM (
                    SELECT 1 FROM product p
                    WHERE \(ProductPageReader.fromNameKey)
                      AND p.name <= ?3 COLLATE NOCASE AND (p.name < ?3 COLLATE NOCASE OR p.id < ?4)
                    LIMIT ?5)
                """), arguments: [key.name, key.id, oldName, oldId, most + 1]) ?? 0
            steps = between + hint <= most ? between + hint : nil
        }
        try db.cachedStatement(sql: """
            UPDATE search_prefix_count SET walk_start_name = ?, walk_start_id = ?, name_walk_steps = ? WHERE prefix = ?
            """).execute(arguments: [key.name, key.id, steps, prefix])
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
