import GRDB
import Shop

/// How many products each one-character search (`"a"*`, every product with a word starting with `a`)
/// matches, kept in the database beside the catalog's text version they are exact for.
///
/// Why: the page a search shows states its total, and the index counts a one-letter prefix's matches at
/// about 40 ns each: 43 ms for `a` at a million products, against a goal of 15 ms for the whole answer. Any
/// longer search matches few enough products to be counted by the index at once.
///
/// How it stays exact: the index's triggers count every change of a product's text in
/// `search_text_version.version`; the counts are used only while `counted` equals it. The writes that change
/// product text (a product created, edited or deleted) apply their change to the counts and mark them exact
/// again; a change made any other way (the `sqlite3` shell, say) leaves them stale, and searches count in
/// the index until the next ``recount(_:)`` (a seed, or a migration).
enum SearchInitialCounts {
    /// Migration `v7-search-counts`: the tables, the index's triggers that count text changes, the counts.
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE search_text_version (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                version INTEGER NOT NULL,
                counted INTEGER NOT NULL
            );
            INSERT INTO search_text_version (id, version, counted) VALUES (1, 0, -1);
            CREATE TABLE search_initial_count (
                initial TEXT PRIMARY KEY NOT NULL,
                products INTEGER NOT NULL CHECK (products > 0)
            ) WITHOUT ROWID;
            CREATE VIRTUAL TABLE product_fts_terms USING fts5vocab(product_fts, 'row');
            DROP TRIGGER product_fts_insert;
            DROP TRIGGER product_fts_delete;
            DROP TRIGGER product_fts_update;
            """)
        try db.execute(sql: ProductSearch.createTriggersSQL)
        try recount(db)
    }

    /// The products matching a search for `initial` (one token of one character, as the index's tokenizer
    /// reads it), when the counts are exact for the catalog's text as it is; nil otherwise.
    static func products(_ db: Database, initial: String) throws -> Int? {
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT v.version = v.counted, (SELECT products FROM search_initial_count WHERE initial = ?)
            FROM search_text_version v
            """), arguments: [initial])
        guard let row, row[0] as Bool? == true else { return nil }
        let products: Int? = row[1]  // NULL: no product has a word with that initial
        return products ?? 0
    }

    /// The text version, and the version the counts are exact for.
    static func versions(_ db: Database) throws -> (version: Int64, counted: Int64) {
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT version, counted FROM search_text_version"))
        return (row?[0] ?? 0, row?[1] ?? -1)
    }

    /// Counts every initial again in the index: the counts are then exact for the catalog's text as it is.
    static func recount(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM search_initial_count")
        let initials = try String.fetchAll(db, sql: "SELECT DISTINCT substr(term, 1, 1) FROM product_fts_terms")
        let count = try db.makeStatement(sql: "SELECT count(*) FROM product_fts WHERE product_fts MATCH ?")
        let insert = try db.makeStatement(sql: "INSERT INTO search_initial_count (initial, products) VALUES (?, ?)")
        for initial in initials {
            let products = try Int.fetchOne(count, arguments: ["\"" + initial.replacingOccurrences(of: "\"", with: "\"\"") + "\"*"]) ?? 0
            if products > 0 { try insert.execute(arguments: [initial, products]) }
        }
        try db.execute(sql: "UPDATE search_text_version SET counted = version")
    }

    /// Applies changes of product text made in this transaction since the text version was `before`: for
    /// each product, its text before (nil: created) and after (nil: deleted). When the counts were exact
    /// before and the changes are all the index counted since, they are exact after; otherwise they stay
    /// stale.
    static func textsChanged(_ db: Database, since before: Int64, _ changes: [(old: ProductText?, new: ProductText?)]) throws {
        let now = try versions(db)
        let counted = changes.filter { $0.old != $0.new }.count
        guard now.counted == before, now.version - before == counted, counted > 0 else { return }
        let tokenizer = try db.makeTokenizer(ProductSearch.tokenizer)
        // Keyed by scalar, as SQLite compares text (Swift's String equality would merge canonically
        // equivalent characters, which the index keeps apart).
        var delta: [Unicode.Scalar: Int] = [:]
        for change in changes where change.old != change.new {
            let old = try change.old.map { try initials(of: $0, tokenizer) } ?? []
            let new = try change.new.map { try initials(of: $0, tokenizer) } ?? []
            for initial in old.subtracting(new) { delta[initial, default: 0] -= 1 }
            for initial in new.subtracting(old) { delta[initial, default: 0] += 1 }
        }
        for (scalar, change) in delta.sorted(by: { $0.key < $1.key }) where change != 0 {
            let initial = String(scalar)
            let products = (try Int.fetchOne(db, sql: "SELECT products FROM search_initial_count WHERE initial = ?", arguments: [initial]) ?? 0) + change
            if products > 0 {
                try db.execute(sql: """
                    INSERT INTO search_initial_count (initial, products) VALUES (?, ?)
                    ON CONFLICT (initial) DO UPDATE SET products = excluded.products
                    """, arguments: [initial, products])
            } else {
                try db.execute(sql: "DELETE FROM search_initial_count WHERE initial = ?", arguments: [initial])
            }
        }
        try db.execute(sql: "UPDATE search_text_version SET counted = version")
    }

    /// The first characters of the tokens of a product's text, as the index reads them.
    static func initials(of text: ProductText, _ tokenizer: any FTS5Tokenizer) throws -> Set<Unicode.Scalar> {
        var initials = Set<Unicode.Scalar>()
        for column in [text.name, text.description] {
            for (token, _) in try tokenizer.tokenize(document: column) {
                if let first = token.unicodeScalars.first { initials.insert(first) }
            }
        }
        return initials
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
