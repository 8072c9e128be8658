import GRDB
import Shop

/// Reads one page of products for a ``ProductQuery`` inside a read transaction, choosing per query how
/// to combine the full-text index with the order of the page.
///
/// Without search text the page is read along the sort's index. With search text there are two plans,
/// because SQLite's own choices are slow at either end of a 100 000-product catalog:
/// - **sparse** matches (a word few products contain): the matches are collected and sorted — cheap,
///   since there are few of them (in a category, SQL lists and sorts them);
/// - **dense** matches (one letter typed: tens of thousands of products): sorting every match costs
///   ~40 ms, so the products are walked in page order along the sort's index, keeping matches until the
///   page is full — a few hundred steps. In the whole catalog each product's text is tested with the
///   index's tokenizer (``ProductTextMatcher``) and the total is counted by the index (or kept, for a word
///   of up to four letters: ``SearchPrefixCounts``), the walk sorted by name starting at the word's first
///   match; in a category, where the walk counts as it goes, the matching
///   rows are collected into a set first.
///
/// Measured at 1 000 000 products (release, `storefront-bench --mode search`): BENCHMARKS.md.
struct ProductPageReader {
    /// How matches are combined with the page order.
    enum Plan {
        /// Whichever ``prefersWalking(matches:products:wanted:)`` predicts is cheaper.
        case cheapest
        /// Always list and sort the matches.
        case listing
        /// Always walk in page order.
        case walking
        /// Always list the matches and sort them, without the sort's index.
        case sortingMatches
        /// Walk at most this many products (without a category), then sort the matches (for tests of the
        /// fallback of ``cheapest``).
        case walkingAtMost(Int)
        /// Without a category: walk testing each product's text, at most this many steps (nil: no limit),
        /// then collect the matches as ``cheapest`` does (for tests of the plan of a kept prefix on any
        /// search).
        case walkingTestingText(Int?)
        /// Sorted by name without a category: the matches with the smallest positions of ``NameOrder``, read
        /// first in this transaction when stale (for tests of the plan ``cheapest`` takes when they are current);
        /// throws ``PlanNotTaken`` where it applies but finds no page (a page deeper than
        /// ``NameOrder/Positions/deepest``, or sorted otherwise, takes ``listing``).
        case namePositions
    }

    /// A plan named for a test could not find the page where it applies (it does not fall back).
    struct PlanNotTaken: Error {
        let plan: Plan
    }

    let query: ProductQuery
    let limit: Int
    let offset: Int
    /// The name order's positions (nil: not used).
    var nameOrder: NameOrder?
    var plan = Plan.cheapest
    /// Whether this reader is the fallback of a walk that tests text and gave up: it collects the matches.
    var isFallback = false

    /// The page, read in `db`.
    func read(_ db: Database) throws -> ProductPage {
        switch ProductSearch.filter(for: query.searchText) {
        case .everything:
            try wantNamePositions(db)
            return try listed(db, matching: nil)
        case .nothing:
            return ProductPage(products: [], totalCount: 0)
        case .match(let expression):
            // seq is the rowid, so its maximum is read from the tree's edge: it bounds every seq.
            let maximumSeq = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM product") ?? 0
            // In a category the walk counts the category's matches as it goes, so it needs them all at hand.
            if query.categoryId == nil, !isFallback,
               let matcher = try ProductTextMatcher(query.searchText, tokenizer: db.makeTokenizer(ProductSearch.tokenizer)) {
                var fallback = self
                fallback.isFallback = true
                if let page = try walkedTestingText(db, expression: expression, matcher: matcher, maximumSeq: maximumSeq, fallback: { try fallback.read(db) }) {
                    return page
                }
            }
            // Seqs far past the catalog's size (most products deleted, or rows written behind the store), or
            // below 0 (written behind it too): SQL alone, without a set of them.
            guard try SeqSet.isPractical(maximum: maximumSeq, bitsPerSeq: 1, in: db) else {
                return try listed(db, matching: expression)
            }
            var matches = SeqSet(maximum: maximumSeq)
            try matches.collect(db, sql: "SELECT storefront_collect_rowids(?1, rowid) FROM product_fts WHERE product_fts MATCH ?2", text: expression)
            let knownTotal = query.categoryId == nil ? matches.count : nil
            if let page = try byNamePositions(db, matches) { return page }
            switch plan {
            case .cheapest, .walkingTestingText:
                let wanted = offset + limit
                guard Self.prefersWalking(matches: matches.count, products: Int(maximumSeq), wanted: wanted) else {
                    // Few matches: sorted, from those collected (listing them again would run the search again).
                    guard query.categoryId == nil else { break }
                    return try sorted(db, matches)
                }
                // Matches are not spread evenly in page order (at 1 M products, "smart linen" matches only
                // names starting with "Smart", 80 % of the way along): a walk that goes far past what an even
                // spread predicts, and past what sorting the matches would cost (a lookup and a sort step
                // per match, about ten walking steps), gives up, and the matches are sorted instead.
                let expectedSteps = Double(max(wanted, 1)) * Double(maximumSeq) / Double(max(matches.count, 1))
                let budget = query.categoryId == nil
                    ? max(2_000, Int(min(4 * expectedSteps, 1e9)), Self.walkStepsPerSortedMatch * matches.count) : nil
                return try walkedOrSorted(db, expression: expression, matches: matches, budget: budget, knownTotal: knownTotal)
            case .walkingAtMost(let steps):
                let budget = query.categoryId == nil ? steps : nil
                return try walkedOrSorted(db, expression: expression, matches: matches, budget: budget, knownTotal: knownTotal)
            case .listing, .namePositions: break
            case .walking: return try walked(db, keeping: matches, budget: nil)!
            case .sortingMatches: return try listed(db, matching: expression, knownTotal: knownTotal, sortingMatches: true)
            }
            return try listed(db, matching: expression, knownTotal: knownTotal)
        }
    }

    /// A search of the whole catalog for one word of up to four letters (`"a"*`: most products at a million of
    /// them), whose total is kept (``SearchPrefixCounts``): the page is found by walking products in page order
    /// testing each one's text, a few hundred steps when the matches are spread along the order; sorted by
    /// name, the walk starts at the word's first match (`"st"`'s 5 018th product at a million). The other
    /// plans collect every match first, at ~0.06 µs each (``SeqSet/collect(_:sql:text:)``): 60 ms for a
    /// letter at a million products. A walk that has cost what collecting would (matches bunched late in the
    /// order) gives up, and `fallback` collects them. Returns nil when the plan does not apply
    /// (``textWalkBudget(_:prefixLength:sort:wanted:products:)``): the total is not kept (a longer search,
    /// whose count by the index costs about half of collecting its matches, so that a walk that gave up would
    /// cost more than it saves), the matches are few, or a longer word's hint says the page lies far along.
    private func walkedTestingText(
        _ db: Database, expression: String, matcher: ProductTextMatcher, maximumSeq: Int64, fallback: () throws -> ProductPage
    ) throws -> ProductPage? {
        let prefix = matcher.shortPrefix(longest: SearchPrefixCounts.longestPrefix)
        let kept = try prefix.flatMap { try SearchPrefixCounts.kept(db, prefix: $0) }
        let wanted = offset + limit
        let total: Int
        let budget: Int?
        switch plan {
        case .cheapest:
            guard let kept, let prefix, let walkBudget = Self.textWalkBudget(
                kept, prefixLength: prefix.unicodeScalars.count, sort: query.sort, wanted: wanted, products: Int(maximumSeq))
            else { return nil }
            total = kept.products
            budget = walkBudget
        case .walkingTestingText(let steps?):
            total = try kept?.products ?? Self.count(db, expression)
            budget = steps
        case .walkingTestingText(nil):
            total = try kept?.products ?? Self.count(db, expression)
            budget = nil
        case .walking, .walkingAtMost, .listing, .sortingMatches, .namePositions: return nil
        }
        // Sorted by name, the walk starts where the prefix's first match may be (no product before it matches).
        if let page = try walked(db, testing: matcher, total: total, budget: budget, from: kept?.nameWalkStart) { return page }
        return try fallback()
    }

    /// Sorted by name without a category: the page of `matches` (all of the search's) by the name order's
    /// positions, when they are current (``NameOrder``); nil otherwise, or for another plan.
    private func byNamePositions(_ db: Database, _ matches: SeqSet) throws -> ProductPage? {
        guard query.categoryId == nil, query.sort == .name, let nameOrder else { return nil }
        switch plan {
        case .cheapest, .namePositions: break
        case .listing, .walking, .sortingMatches, .walkingAtMost, .walkingTestingText: return nil
        }
        if offset >= matches.count { return ProductPage(products: [], totalCount: matches.count) }
        let wanted = offset + limit
        guard wanted <= NameOrder.Positions.deepest else { return nil }
        let version = try NameOrder.Version.current(db)
        if case .namePositions = plan, !nameOrder.isCurrent(at: version) { try nameOrder.read(db) }
        guard let positions = nameOrder.positions(at: version), let seqs = positions.first(wanted, of: matches) else {
            // The plan the tests name must not fall back to another unnoticed.
            if case .namePositions = plan { throw PlanNotTaken(plan: plan) }
            return nil
        }
        return ProductPage(products: try products(db, seqs: Array(seqs.dropFirst(offset))), totalCount: matches.count)
    }

    /// The whole catalog sorted by name, unsearched (the catalog screen as it appears): marks the name order's
    /// positions wanted when they are stale, so that the catalog service reads them while the user starts typing
    /// and the first search sorted by name finds them current (at a million products a search that finds them
    /// stale takes the other plans: `"st"` 22 ms instead of ~12). Costs two reads of one row when current.
    private func wantNamePositions(_ db: Database) throws {
        guard query.categoryId == nil, query.sort == .name, let nameOrder else { return }
        _ = nameOrder.positions(at: try NameOrder.Version.current(db))
    }

    /// The number of matches of `expression`, counted by the index.
    private static func count(_ db: Database, _ expression: String) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM product_fts WHERE product_fts MATCH ?"), arguments: [expression]) ?? 0
    }

    /// The fewest steps a walk that tests text takes before giving up.
    static let textWalkMinimumBudget = 1_000

    /// Steps of a walk that tests text that cost about as much as collecting one match: a step reads a
    /// product's row and text (~4 µs at a million products, out of the page cache's order), a collected match
    /// ~0.06 µs plus its share of the page's pick.
    static let textWalkStepsPerCollectedMatch = 40

    /// The most steps a walk that tests text may take for a search of a kept prefix of `prefixLength`
    /// characters, nil when collecting the matches is the cheaper plan:
    /// - one letter: when its matches are dense enough for a walk (``prefersWalking(matches:products:wanted:)``),
    ///   up to what collecting them would cost;
    /// - two to four letters, sorted by name, for a page within the first ``SearchPrefixCounts/walkHintMatches``
    ///   matches: when the recount's hint (counted from the word's first match, where the walk starts) says the
    ///   page lies within what collecting would cost, up to twice the hint (the catalog may have changed since).
    static func textWalkBudget(_ kept: SearchPrefixCounts.Kept, prefixLength: Int, sort: ProductSort, wanted: Int, products: Int) -> Int? {
        let collecting = kept.products / textWalkStepsPerCollectedMatch
        switch prefixLength {
        case 1:
            guard prefersWalking(matches: kept.products, products: products, wanted: wanted) else { return nil }
            return max(textWalkMinimumBudget, collecting)
        default:
            guard sort == .name, wanted <= SearchPrefixCounts.walkHintMatches, let steps = kept.nameWalkSteps, steps <= collecting else {
                return nil
            }
            return max(textWalkMinimumBudget, 2 * steps)
        }
    }

    /// Whether walking in page order beats listing and sorting the matches (``ProductPageWindow``'s rule).
    static func prefersWalking(matches: Int, products: Int, wanted: Int) -> Bool {
        ProductPageWindow.prefersWalking(matches: matches, products: products, wanted: wanted)
    }

    /// Walking steps that cost about as much as sorting one match (looking it up by rowid and sorting it).
    static let walkStepsPerSortedMatch = 10

    // MARK: Plans

    /// The walk within `budget` steps, else the matches sorted.
    private func walkedOrSorted(
        _ db: Database, expression: String, matches: SeqSet, budget: Int?, knownTotal: Int?
    ) throws -> ProductPage {
        if let page = try walked(db, keeping: matches, budget: budget) { return page }
        if query.categoryId == nil { return try sorted(db, matches) }
        return try listed(db, matching: expression, knownTotal: knownTotal, sortingMatches: true)
    }

    /// The page by SQL alone: the matches (if any) listed by the index, filtered and sorted. With
    /// `sortingMatches`, the sort's index is kept out of the plan (a unary `+` on the first ORDER BY term),
    /// so SQLite looks up each match by rowid and sorts them, instead of walking the index in page order
    /// and testing each product: the better plan when the matches are few or bunched in page order.
    private func listed(
        _ db: Database, matching expression: String?, knownTotal: Int? = nil, sortingMatches: Bool = false
    ) throws -> ProductPage {
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
        let total: Int
        if let knownTotal {
            total = knownTotal
        } else if expression == nil {
            // Not searching: the categories' kept counts (each product is in one category).
            total = try CategoryCounts.products(db, in: query.categoryId)
        } else {
            total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM product p \(whereClause)", arguments: arguments) ?? 0
        }
        let products = try StoredRows.products(db, sql: """
            SELECT \(StoredRows.productColumns) FROM product p \(whereClause)
            ORDER BY \(sortingMatches ? "+" : "")\(orderClause) LIMIT ? OFFSET ?
            """, arguments: arguments + [limit, offset])
        return ProductPage(products: products, totalCount: total)
    }

    /// The page of the whole catalog's `matches` (few), sorted in page order.
    private func sorted(_ db: Database, _ matches: SeqSet) throws -> ProductPage {
        let seqs = "[" + matches.members.map(String.init).joined(separator: ",") + "]"
        let products = try StoredRows.products(db, sql: """
            SELECT \(StoredRows.productColumns) FROM product p WHERE p.seq IN (SELECT value FROM json_each(?))
            ORDER BY +\(orderClause) LIMIT ? OFFSET ?
            """, arguments: [seqs, limit, offset])
        return ProductPage(products: products, totalCount: matches.count)
    }

    /// The page by walking products in page order and keeping those in `matches`. Without a category the
    /// walk stops when the page is full (the total is the number of matches); in a category it goes on
    /// to count the category's matches (a category is a fraction of the catalog).
    /// - Parameter budget: the most products to walk before giving up (nil: no limit); only without a
    ///   category. Returns nil when it gave up.
    private func walked(_ db: Database, keeping matches: SeqSet, budget: Int?) throws -> ProductPage? {
        var pageSeqs: [Int64] = []
        var seen = 0
        let walkedWithinBudget: Bool
        if let categoryId = query.categoryId {
            walkedWithinBudget = try matches.walk(
                db, sql: "SELECT p.seq FROM product p WHERE p.categoryId = ?2 AND storefront_walk_keeps(?1, p.seq) ORDER BY \(orderClause)",
                arguments: [.text(categoryId)], budget: nil
            ) { seq in
                if seen >= offset && pageSeqs.count < limit { pageSeqs.append(seq) }
                seen += 1
                return true
            }
        } else {
            walkedWithinBudget = try matches.walk(
                db, sql: "SELECT p.seq FROM product p WHERE storefront_walk_keeps(?1, p.seq) ORDER BY \(orderClause) LIMIT ?2",
                arguments: [.integer(Int64(offset + limit))], budget: budget
            ) { seq in
                if seen >= offset { pageSeqs.append(seq) }
                seen += 1
                return true
            }
        }
        guard walkedWithinBudget else { return nil }
        let total = query.categoryId == nil ? matches.count : seen
        return ProductPage(products: try products(db, seqs: pageSeqs), totalCount: total)
    }

    /// The page by walking every product in page order and testing its text with `matcher`; the total is
    /// known. Returns nil when it walked `budget` products (nil: no limit) without filling the page.
    /// - Parameter start: the place in the name order to start from when sorted by name, where no product before
    ///   it matches (nil, or another sort: the first product).
    private func walked(
        _ db: Database, testing matcher: ProductTextMatcher, total: Int, budget: Int?, from start: SearchPrefixCounts.NameKey?
    ) throws -> ProductPage? {
        var pageSeqs: [Int64] = []
        var seen = 0
        var steps = 0
        var gaveUp = false
        guard limit > 0, total > 0 else { return ProductPage(products: [], totalCount: total) }
        let walk: DirectStatement
        var arguments: [DirectStatement.Argument] = []
        if let start, query.sort == .name {
            walk = try DirectStatement(db, "SELECT p.seq, p.name, p.description FROM product p WHERE \(Self.fromNameKey) ORDER BY \(orderClause)")
            arguments = [.text(start.name), .text(start.id)]
        } else {
            walk = try DirectStatement(db, "SELECT p.seq, p.name, p.description FROM product p ORDER BY \(orderClause)")
        }
        try walk.forEachRow(arguments) { row in
            steps += 1
            if let budget, steps > budget {
                gaveUp = true
                return false
            }
            guard try matcher.matches(name: row.text(1), description: row.text(2)) else { return true }
            if seen >= offset { pageSeqs.append(row.int64(0)) }
            seen += 1
            return pageSeqs.count < limit && seen < total
        }
        guard !gaveUp else { return nil }
        return ProductPage(products: try products(db, seqs: pageSeqs), totalCount: total)
    }

    /// The products numbered `seqs`, in page order.
    private func products(_ db: Database, seqs: [Int64]) throws -> [Product] {
        guard !seqs.isEmpty else { return [] }
        let placeholders = Array(repeating: "?", count: seqs.count).joined(separator: ",")
        return try StoredRows.products(
            db, sql: "SELECT \(StoredRows.productColumns) FROM product p WHERE p.seq IN (\(placeholders)) ORDER BY \(orderClause)",
            arguments: StatementArguments(seqs))
    }

    /// The name order (`ORDER BY`), as the name index has it.
    static let byName = "p.name COLLATE NOCASE, p.id"

    /// The products from the place in the name order (``byName``) of name `?1` and id `?2` on (`WHERE`), spelled
    /// so that SQLite seeks the name index (a row value, `(name, id) >= (?, ?)`, scans it whole).
    static let fromNameKey = "p.name >= ?1 COLLATE NOCASE AND (p.name > ?1 COLLATE NOCASE OR p.id >= ?2)"

    private var orderClause: String {
        switch query.sort {
        case .name: Self.byName
        case .price: "p.price, p.id"
        case .newest: "p.createdAt DESC, p.id"
        }
    }
}
