import GRDB
import GRDBSQLite
import Shop

/// Reads one page of products for a ``ProductQuery`` inside a read transaction, choosing per query how
/// to combine the full-text index with the order of the page.
///
/// Without search text the page is read along the sort's index. With search text there are two plans,
/// because SQLite's own choices are slow at either end of a 100 000-product catalog:
/// - **sparse** matches (a word few products contain): SQL lists the matches and sorts them — cheap,
///   since there are few of them;
/// - **dense** matches (one letter typed: tens of thousands of products): sorting every match costs
///   ~40 ms, so the matching rows are collected into a set once and the products are walked in page
///   order along the sort's index, keeping matches until the page is full — a few hundred steps.
///
/// Measured at 100 000 products (release, `storefront-bench --mode search`): a one-letter query takes
/// a few ms instead of ~100 ms.
struct ProductPageReader {
    /// How matches are combined with the page order.
    enum Plan {
        /// Whichever ``prefersWalking(matches:products:wanted:)`` predicts is cheaper.
        case cheapest
        /// Always list and sort the matches.
        case listing
        /// Always walk in page order.
        case walking
    }

    let query: ProductQuery
    let limit: Int
    let offset: Int
    var plan = Plan.cheapest

    /// The page, read in `db`.
    func read(_ db: Database) throws -> ProductPage {
        switch ProductSearch.filter(for: query.searchText) {
        case .everything:
            return try listed(db, matching: nil)
        case .nothing:
            return ProductPage(products: [], totalCount: 0)
        case .match(let expression):
            // seq is the rowid, so its maximum is read from the tree's edge: it bounds every seq.
            let maximumSeq = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM product") ?? 0
            var matches = SeqSet(maximum: maximumSeq)
            try Self.forEachInteger(
                db.cachedStatement(sql: "SELECT rowid FROM product_fts WHERE product_fts MATCH ?"), arguments: [expression]
            ) { seq in
                matches.insert(seq)
                return true
            }
            let walks = switch plan {
            case .cheapest: Self.prefersWalking(matches: matches.count, products: Int(maximumSeq), wanted: offset + limit)
            case .listing: false
            case .walking: true
            }
            if walks {
                return try walked(db, keeping: matches)
            }
            return try listed(db, matching: expression, knownTotal: query.categoryId == nil ? matches.count : nil)
        }
    }

    /// Whether walking in page order beats listing and sorting the matches: a walk takes about
    /// `wanted × products / matches` steps, a listing handles every match (both a fraction of a µs each).
    static func prefersWalking(matches: Int, products: Int, wanted: Int) -> Bool {
        Double(matches) * Double(matches) > Double(max(wanted, 1)) * Double(products)
    }

    // MARK: Plans

    /// The page by SQL alone: the matches (if any) listed by the index, filtered and sorted.
    private func listed(_ db: Database, matching expression: String?, knownTotal: Int? = nil) throws -> ProductPage {
        var conditions: [String] = []
        var arguments = StatementArguments()
        if let expression {
            conditions.append("p.seq IN (SELECT rowid FROM product_fts WHERE product_fts MATCH ?)")
            _ = arguments.append(contentsOf: [expression])
        }
        if let categoryId = query.categoryId {
            conditions.append("p.categoryId = ?")
            _ = arguments.append(contentsOf: [categoryId])
        }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let total = try knownTotal
            ?? Int.fetchOne(db, sql: "SELECT COUNT(*) FROM product p \(whereClause)", arguments: arguments) ?? 0
        let products = try StoredRows.products(db, sql: """
            SELECT \(StoredRows.productColumns) FROM product p \(whereClause)
            ORDER BY \(orderClause) LIMIT ? OFFSET ?
            """, arguments: arguments + [limit, offset])
        return ProductPage(products: products, totalCount: total)
    }

    /// The page by walking products in page order and keeping those in `matches`. Without a category the
    /// walk stops when the page is full (the total is the number of matches); in a category it goes on
    /// to count the category's matches (a category is a fraction of the catalog).
    private func walked(_ db: Database, keeping matches: SeqSet) throws -> ProductPage {
        var arguments = StatementArguments()
        var whereClause = ""
        if let categoryId = query.categoryId {
            whereClause = "WHERE p.categoryId = ?"
            _ = arguments.append(contentsOf: [categoryId])
        }
        var pageSeqs: [Int64] = []
        var seen = 0
        try Self.forEachInteger(
            db.cachedStatement(sql: "SELECT p.seq FROM product p \(whereClause) ORDER BY \(orderClause)"), arguments: arguments
        ) { seq in
            guard matches.contains(seq) else { return true }
            if seen >= offset && pageSeqs.count < limit { pageSeqs.append(seq) }
            seen += 1
            return query.categoryId != nil || pageSeqs.count < limit
        }
        let total = query.categoryId == nil ? matches.count : seen
        guard !pageSeqs.isEmpty else { return ProductPage(products: [], totalCount: total) }
        let placeholders = Array(repeating: "?", count: pageSeqs.count).joined(separator: ",")
        let products = try StoredRows.products(
            db, sql: "SELECT \(StoredRows.productColumns) FROM product p WHERE p.seq IN (\(placeholders)) ORDER BY \(orderClause)",
            arguments: StatementArguments(pageSeqs))
        return ProductPage(products: products, totalCount: total)
    }

    /// Steps `statement`, whose first column is an integer, calling `body` with each value until it
    /// returns false. Straight on SQLite: GRDB's generic cursors cost more per row than the row itself
    /// when a search collects 100 000 rowids.
    private static func forEachInteger(
        _ statement: Statement, arguments: StatementArguments, _ body: (Int64) throws -> Bool
    ) throws {
        try statement.setArguments(arguments)
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))), sql: statement.sql)
            }
            guard try body(sqlite3_column_int64(handle, 0)) else { return }
        }
    }

    private var orderClause: String {
        switch query.sort {
        case .name: "p.name COLLATE NOCASE, p.id"
        case .price: "p.price, p.id"
        case .newest: "p.createdAt DESC, p.id"
        }
    }
}

/// A set of product seqs (rowids from 1 up to a known maximum) as bits: a search collects up to one per
/// product, and testing a bit is far cheaper than hashing into a `Set`.
struct SeqSet {
    private var words: [UInt64]
    private let maximum: Int64
    /// How many seqs are in the set.
    private(set) var count = 0

    /// An empty set for seqs up to `maximum`.
    init(maximum: Int64) {
        self.maximum = max(maximum, 0)
        words = Array(repeating: 0, count: Int(self.maximum) / 64 + 1)
    }

    /// Adds `seq`; seqs outside 0...maximum are ignored (none exist).
    mutating func insert(_ seq: Int64) {
        guard seq >= 0, seq <= maximum else { return }
        let mask: UInt64 = 1 << UInt64(seq % 64)
        if words[Int(seq) / 64] & mask == 0 {
            words[Int(seq) / 64] |= mask
            count += 1
        }
    }

    /// Whether `seq` is in the set.
    func contains(_ seq: Int64) -> Bool {
        guard seq >= 0, seq <= maximum else { return false }
        return words[Int(seq) / 64] & (1 << UInt64(seq % 64)) != 0
    }
}
