import Foundation
import GRDB
import Shop
import Testing
@testable import ShopStore

/// A search that walks products testing their text (``ProductTextMatcher``) finds what the index finds; the
/// kept counts of searches of one to four letters (``SearchPrefixCounts``) are the index's counts, or unused; and
/// the walks' starts lie before every match.
@Suite struct SearchPrefixCountsTests {
    let database: ShopDatabase
    let catalog: any CatalogService

    init() throws {
        try self.init(database: ShopDatabase(path: ":memory:"))
    }

    init(database: ShopDatabase) {
        self.database = database
        catalog = ShopServices.testing(database).catalog
    }

    @discardableResult
    func create(_ name: String, _ description: String = "") async throws -> Product {
        try await catalog.create(NewProduct(name: name, description: description, price: Money(minorUnits: 100), categoryId: "office"))
    }

    /// What the index itself counts for a search of `prefix`.
    func indexCount(_ prefix: String) async throws -> Int {
        try await database.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM product_fts WHERE product_fts MATCH ?", arguments: ["\"\(prefix)\"*"]) ?? 0
        }
    }

    /// Every prefix the counts keep of the catalog's words, and a few of none.
    func prefixes() async throws -> [String] {
        let used = try await database.writer.read { db in
            try String.fetchAll(db, sql: (1...SearchPrefixCounts.longestPrefix).map {
                "SELECT DISTINCT substr(term, 1, \($0)) FROM product_fts_terms"
            }.joined(separator: " UNION "))
        }
        return used + ["q", "x", "7", "ж"]
    }

    func expectCountsAreTheIndexs(_ comment: Comment) async throws {
        for prefix in try await prefixes() {
            let kept = try await database.writer.read { try SearchPrefixCounts.products($0, prefix: prefix) }
            #expect(kept == (try await indexCount(prefix)), "\(prefix): \(comment)")
        }
    }

    @Test func walkingTestsTextAsTheIndexReadsIt() async throws {
        try await create("Café Crème Brûlée Torch", "Yo-yo's favourite, 2-in-1 ÉLAN and naïve déjà vu")
        try await create("Œuvre Ångström Straße", "l'été, rock'n'roll; e-mail@example.com 3.14")
        try await create("Yo Yo Kit", "yo")
        try await create("日本 Tea", "緑茶 matcha")
        try await create("Snake_case X-Ray C++ Kit", "AT&T 1,000.50 #hash /path\\to tab\there")
        var compared = 0
        for text in [
            "cafe", "CAFÉ", "creme bru", "brulee", "yo-yo", "yo-y", "yo yo", "yo's", "2-in", "2-in-1", "elan na", "naive deja",
            "deja v", "oeuvre", "œuv", "angstr", "strasse", "straß", "l'e", "l'ete", "rock'n", "e-mail", "mail@ex", "3.1",
            "日本", "緑", "tea", "é", "e", "c", "y", "2", "ß", "o", "œ",
            "snake_c", "snake case", "x-ra", "c++", "at&t", "1,000", "000.5", "#hash", "path\\to", "tab", "here", "t",
        ] {
            let query = ProductQuery(searchText: text, sort: .name, limit: 50)
            let pages = try await database.writer.read { db in
                try [ProductPageReader.Plan.listing, .walkingTestingText(nil)].map { try ProductPageReader(query: query, limit: 50, offset: 0, plan: $0).read(db) }
            }
            #expect(pages[0] == pages[1], "\(text)")
            compared += 1
        }
        #expect(compared == 47)
    }

    @Test func keptCountsFollowEveryCreateEditAndDelete() async throws {
        try await expectCountsAreTheIndexs("as seeded")
        let first = try await create("Quokka Xylophone", "x marks the spot")
        let second = try await create("Жёлтый Zebra", "quiet")
        try await expectCountsAreTheIndexs("after creating two")
        _ = try await catalog.update(id: first.id, ProductUpdate(name: "Quince Jam", description: "jar"))
        try await expectCountsAreTheIndexs("after renaming one")
        _ = try await catalog.update(id: second.id, ProductUpdate(price: Money(minorUnits: 250), stock: 3))
        try await expectCountsAreTheIndexs("after repricing one")
        let someDemoProducts = try await catalog.page(ProductQuery(limit: 30)).products.map(\.id)
        try await catalog.delete(ids: [first.id, second.id] + someDemoProducts)
        try await expectCountsAreTheIndexs("after deleting 32")
        #expect(try await database.writer.read { try SearchPrefixCounts.products($0, prefix: "q") } == (try await indexCount("q")))
    }

    @Test func countsCompareTextAsSQLiteDoes() async throws {
        // U+F900 and U+8C48 are canonically equivalent (Swift's == says equal) but distinct to the index.
        let ideograph = try await create("\u{F900}rack Shelf")
        // With a new price too: the service compares products as Swift does, and would drop a rename alone.
        _ = try await catalog.update(id: ideograph.id, ProductUpdate(name: "\u{8C48}rack Shelf", price: Money(minorUnits: 150)))
        try await expectCountsAreTheIndexs("after a canonically equivalent rename")
        for prefix in ["\u{F900}", "\u{8C48}"] {
            let kept = try await database.writer.read { try SearchPrefixCounts.products($0, prefix: prefix) }
            #expect(kept == (try await indexCount(prefix)), "\(prefix)")
        }
        // Both, counted by a recount (which reads the index's vocabulary, not the writes).
        try await create("\u{F900}\u{F900} Rack")
        try await database.writer.write { try SearchPrefixCounts.recount($0) }
        for prefix in ["\u{F900}", "\u{8C48}", "\u{F900}\u{F900}", "\u{8C48}r"] {
            let kept = try await database.writer.read { try SearchPrefixCounts.products($0, prefix: prefix) }
            #expect(kept == (try await indexCount(prefix)), "\(prefix)")
            #expect(kept == 1, "\(prefix)")
        }
    }

    @Test func aDescriptionWithANulIsRefusedRatherThanStoredCut() async throws {
        // SQLite stores text up to a NUL: the answer would show what was not stored.
        await #expect(throws: ShopError.self) { try await create("Okapi Lamp", "ok\u{0}zebra") }
        #expect(ProductRules.descriptionError("two\nlines\tand a tab") == nil)
        #expect(ProductRules.descriptionError("bell\u{7}") != nil)
    }

    @Test func aChangeMadeBehindTheServicesLeavesTheCountsUnusedUntilARecount() async throws {
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE product SET name = 'Zzyzx Gadget' WHERE seq = 1")
        }
        #expect(try await database.writer.read { try SearchPrefixCounts.products($0, prefix: "z") } == nil)
        // The search counts in the index meanwhile, and a change through the services keeps them unused.
        #expect(try await catalog.page(ProductQuery(searchText: "z", limit: 10)).totalCount == (try await indexCount("z")))
        try await create("Zesty Lemon")
        #expect(try await database.writer.read { try SearchPrefixCounts.products($0, prefix: "z") } == nil)
        // What `storefront recount` runs.
        #expect(try await database.recountSearch() == true)
        try await expectCountsAreTheIndexs("after the recount")
        #expect(try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "ze") }?.nameWalkStart != nil)
        #expect(try await database.recountSearch() == false)
    }

    @Test func shortSearchesAnswerWithTheKeptCount() async throws {
        // The kept count is what the page states: made wrong on purpose, it shows.
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE search_prefix_count SET products = 200 WHERE prefix = 'a'")
        }
        #expect(try await catalog.page(ProductQuery(searchText: "a", limit: 5)).totalCount == 200)
        // A longer search is counted by the index.
        #expect(try await catalog.page(ProductQuery(searchText: "coz", limit: 5)).totalCount == (try await indexCount("coz")))
    }

    /// For each of `prefixes`, where a walk in name order of its matches starts (its first match) and how many
    /// products it passes from there until it has `SearchPrefixCounts.walkHintMatches` of them (nil: fewer
    /// matches), found from the index's matches and the name order.
    func expectedNameWalks(_ prefixes: [String]) async throws -> [String: (start: SearchPrefixCounts.NameKey?, steps: Int?)] {
        try await database.writer.read { db in
            let order = try Row.fetchAll(db, sql: "SELECT p.seq, p.name, p.id FROM product p ORDER BY \(ProductPageReader.byName)")
            var walks: [String: (start: SearchPrefixCounts.NameKey?, steps: Int?)] = [:]
            for prefix in prefixes {
                let matches = Set(try Int64.fetchAll(db, sql: "SELECT rowid FROM product_fts WHERE product_fts MATCH ?", arguments: ["\"\(prefix)\"*"]))
                var first: (step: Int, key: SearchPrefixCounts.NameKey)?
                var steps: Int?
                var found = 0
                for (index, row) in order.enumerated() where matches.contains(row[0]) {
                    if first == nil { first = (index + 1, SearchPrefixCounts.NameKey(name: row[1], id: row[2])) }
                    found += 1
                    if found == SearchPrefixCounts.walkHintMatches {
                        steps = index + 1 - first!.step + 1
                        break
                    }
                }
                walks[prefix] = (first?.key, steps)
            }
            return walks
        }
    }

    /// What is kept for every prefix of the catalog.
    func keptForEveryPrefix() async throws -> [(String, SearchPrefixCounts.Kept?)] {
        let all = try await prefixes()
        return try await database.writer.read { db in try all.map { prefix in (prefix, try SearchPrefixCounts.kept(db, prefix: prefix)) } }
    }

    @Test func theWalksStartIsThePrefixsFirstMatchAndItsHintWhereAPageOfMatchesFills() async throws {
        try await database.seed(products: 3_000)
        let kept = try await keptForEveryPrefix()
        let firstProduct = try await database.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT p.name, p.id FROM product p ORDER BY \(ProductPageReader.byName) LIMIT 1")
                .map { SearchPrefixCounts.NameKey(name: $0[0], id: $0[1]) }
        }
        let walks = try await expectedNameWalks(kept.map(\.0))
        var hinted = 0
        var late = 0
        for (prefix, kept) in kept {
            let expected = walks[prefix]!
            #expect(kept?.nameWalkSteps == expected.steps, "\(prefix)")
            #expect(kept?.nameWalkStart == expected.start, "\(prefix)")
            if expected.steps != nil { hinted += 1 }
            if let start = expected.start, start != firstProduct { late += 1 }
        }
        #expect(hinted > 5)
        #expect(late > 5, "starts past the first product")
        // Written since the recount: counted, started at itself, not hinted.
        let created = try await create("Quokka Xylophone", "x marks the spot")
        #expect(try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "xy") } == SearchPrefixCounts.Kept(
            products: 1, nameWalkSteps: nil, nameWalkStart: SearchPrefixCounts.NameKey(name: "Quokka Xylophone", id: created.id)))
    }

    /// Every prefix's page by walking from its start (as far as it takes) is the listing's.
    func expectWalksFromTheStartsFindTheListingsPages(_ comment: Comment) async throws {
        for prefix in try await prefixes() {
            for (offset, limit) in [(5, 15)] {
                let query = ProductQuery(searchText: prefix, sort: .name, offset: offset, limit: limit)
                let pages = try await database.writer.read { db in
                    try [ProductPageReader.Plan.listing, .walkingTestingText(nil)].map {
                        try ProductPageReader(query: query, limit: limit, offset: offset, plan: $0).read(db)
                    }
                }
                #expect(pages[0] == pages[1], "\(prefix) \(offset)+\(limit): \(comment)")
            }
        }
    }

    @Test func everyWriteKeepsTheStartsBeforeEveryMatch() async throws {
        try await database.seed(products: 600)
        try await expectWalksFromTheStartsFindTheListingsPages("as seeded")
        let before = try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "st") }
        #expect(before?.nameWalkStart != nil)
        // Sorting first, and with words of many prefixes: every start it has a prefix of moves to it.
        let first = try await create("Aaa Stool", "a sturdy oak stand, smart linen and wool")
        let moved = try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "st") }
        #expect(moved?.nameWalkStart == SearchPrefixCounts.NameKey(name: "Aaa Stool", id: first.id))
        #expect(moved?.nameWalkStart != before?.nameWalkStart)
        // The same name but for its case sorts with it, by id.
        let second = try await create("AAA STOOL")
        #expect(try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "st") }?.nameWalkStart?.id == min(first.id, second.id))
        try await expectWalksFromTheStartsFindTheListingsPages("after two created first")
        // Renamed to sort first, keeping its words; a rename that takes words away; a deletion of a start.
        let last = try await catalog.page(ProductQuery(sort: .name, offset: 590, limit: 1)).products[0]
        _ = try await catalog.update(id: last.id, ProductUpdate(name: "Aa " + last.name))
        try await expectWalksFromTheStartsFindTheListingsPages("after a rename to the front")
        _ = try await catalog.update(id: second.id, ProductUpdate(name: "Aaa Plain"))
        try await catalog.delete(ids: [first.id])
        try await expectWalksFromTheStartsFindTheListingsPages("after a rename and a deletion")
        // The starts stay bounds after a deletion (not moved forward), and are used.
        #expect(try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "st") }?.nameWalkStart?.id == min(first.id, second.id))
    }

    @Test func aStartMovedBackKeepsItsHintAnUpperBoundOrDropsIt() async throws {
        // 200 items, then 1 000 widgets, the only products with a word starting "st": its page is the first 20
        // widgets, and a walk from its start pays up to 1 000 / 40 = 25 steps.
        try await database.writer.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1199)
                INSERT INTO product (seq, id, name, description, price, categoryId, stock, maxPerOrder, createdAt)
                SELECT 100000 + i, printf('w-%04d', i), CASE WHEN i < 200 THEN printf('Item %04d', i) ELSE printf('Widget %04d', i) END,
                    CASE WHEN i < 200 THEN 'plain' ELSE 'stool' END, 100, 'office', 1, 1, 0 FROM n;
                DELETE FROM product WHERE seq < 100000;
                """)
            try SearchPrefixCounts.recount(db)
        }
        let kept = { try await self.database.writer.read { try SearchPrefixCounts.kept($0, prefix: "st") } }
        #expect(try await kept() == SearchPrefixCounts.Kept(
            products: 1_000, nameWalkSteps: 20, nameWalkStart: SearchPrefixCounts.NameKey(name: "Widget 0200", id: "w-0200")))
        // Just before it: the walk passes one more product.
        let near = try await create("Widget", "stool")
        #expect(try await kept() == SearchPrefixCounts.Kept(
            products: 1_001, nameWalkSteps: 21, nameWalkStart: SearchPrefixCounts.NameKey(name: "Widget", id: near.id)))
        let walked = try await expectedNameWalks(["st"])["st"]!
        #expect(walked.start == SearchPrefixCounts.NameKey(name: "Widget", id: near.id) && walked.steps! <= 21)
        try await expectWalksFromTheStartsFindTheListingsPages("after a start moved one product back")
        // 100 items before it: past what a walk pays, the hint is dropped (the search collects).
        let far = try await create("Item 0100 Stool")
        #expect(try await kept() == SearchPrefixCounts.Kept(
            products: 1_002, nameWalkSteps: nil, nameWalkStart: SearchPrefixCounts.NameKey(name: "Item 0100 Stool", id: far.id)))
        try await expectWalksFromTheStartsFindTheListingsPages("after a start moved far back")
    }

    @Test func aRecountCountsAProductWithANegativeSeqInTheIndexWithoutStarts() async throws {
        // Written behind the store: a set of seqs holds none below 0.
        try await database.writer.write { db in
            try db.execute(sql: """
                INSERT INTO product (seq, id, name, description, price, categoryId, stock, maxPerOrder, createdAt)
                VALUES (-5, 'p-negative', 'Negative Stool', 'nebula', 100, 'office', 1, 1, 0)
                """)
            try SearchPrefixCounts.recount(db)
        }
        try await expectCountsAreTheIndexs("with a negative seq")
        for (prefix, kept) in try await keptForEveryPrefix() {
            #expect(kept?.nameWalkStart == nil && kept?.nameWalkSteps == nil, "\(prefix)")
        }
        try await expectWalksFromTheStartsFindTheListingsPages("with a negative seq")
    }

    /// What a server from before `v13-search-walk-starts` writes with a product: the triggers count it, and it
    /// marks the counts exact (it keeps them) but not the starts.
    static func createAsBeforeWalkStarts(_ db: Database, name: String, description: String) throws {
        try db.execute(sql: """
            INSERT INTO product (seq, id, name, description, price, categoryId, stock, maxPerOrder, createdAt)
            VALUES ((SELECT MAX(seq) + 1 FROM product), 'p-older', ?, ?, 100, 'office', 1, 1, 0);
            INSERT INTO search_prefix_count (prefix, products)
            SELECT p, (SELECT count(*) FROM product_fts WHERE product_fts MATCH '"' || p || '"*')
            FROM (SELECT DISTINCT substr(term, 1, 1) AS p FROM product_fts_terms
                  UNION SELECT DISTINCT substr(term, 1, 2) FROM product_fts_terms)
            WHERE true ON CONFLICT (prefix) DO UPDATE SET products = excluded.products;
            UPDATE search_text_version SET counted = version, counted_two_letters = version;
            """, arguments: [name, description])
    }

    @Test func aServerFromBeforeWalkStartsWritingLeavesThemUnused() async throws {
        try await database.seed(products: 600)
        #expect(try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "st") }?.nameWalkStart != nil)
        try await database.writer.write { try Self.createAsBeforeWalkStarts($0, name: "Aaa Stool", description: "sturdy") }
        let kept = try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "st") }
        #expect(kept?.products == (try await indexCount("st")))
        #expect(kept?.nameWalkStart == nil && kept?.nameWalkSteps == nil)
        try await expectWalksFromTheStartsFindTheListingsPages("after an older server's write")
        let page = try await catalog.page(ProductQuery(searchText: "st", sort: .name, limit: 20))
        #expect(page.products.first?.name == "Aaa Stool")
        // This server's writes leave them unused too, until a recount.
        try await create("Abc Stand")
        #expect(try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "st") }?.nameWalkStart == nil)
        try await database.writer.write { try SearchPrefixCounts.recount($0) }
        #expect(try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "st") }?.nameWalkStart?.id == "p-older")
    }

    @Test func searchesOfTwoToFourLettersFindThePageAnyPlanFindsWhateverTheHint() async throws {
        try await database.seed(products: 3_000)
        let twoLetters = try await prefixes().filter { $0.unicodeScalars.count >= 2 }
        #expect(twoLetters.count > 20)
        // The hints as measured, none, and wrong: far too short, and far too long.
        for hints in ["name_walk_steps", "NULL", "1", "100000"] {
            try await database.writer.write { db in try db.execute(sql: "UPDATE search_prefix_count SET name_walk_steps = \(hints)") }
            for prefix in twoLetters {
                for (offset, limit) in [(0, 20), (10, 10)] {
                    let query = ProductQuery(searchText: prefix, sort: .name, offset: offset, limit: limit)
                    let pages = try await database.writer.read { db in
                        try [ProductPageReader.Plan.listing, .cheapest].map { try ProductPageReader(query: query, limit: limit, offset: offset, plan: $0).read(db) }
                    }
                    #expect(pages[0] == pages[1], "\(prefix) \(offset)+\(limit), hints \(hints)")
                }
            }
        }
    }

    @Test func twoLettersWalkOnlyForAFirstPageByNameWhereTheHintSaysTheWalkIsShort() {
        let hinted = SearchPrefixCounts.Kept(products: 100_000, nameWalkSteps: 600)
        let budget = { (kept: SearchPrefixCounts.Kept, length: Int, sort: ProductSort, wanted: Int) in
            ProductPageReader.textWalkBudget(kept, prefixLength: length, sort: sort, wanted: wanted, products: 1_000_000)
        }
        #expect(budget(hinted, 2, .name, 20) == 1_200)
        #expect(budget(SearchPrefixCounts.Kept(products: 100_000, nameWalkSteps: 80), 2, .name, 20) == ProductPageReader.textWalkMinimumBudget)
        #expect(budget(hinted, 2, .price, 20) == nil)
        #expect(budget(hinted, 2, .name, 21) == nil)
        #expect(budget(SearchPrefixCounts.Kept(products: 100_000, nameWalkSteps: nil), 2, .name, 20) == nil)
        // Past what collecting 100 000 matches costs (2 500 steps).
        #expect(budget(SearchPrefixCounts.Kept(products: 100_000, nameWalkSteps: 2_501), 2, .name, 20) == nil)
        // Three and four letters as two.
        #expect(budget(hinted, 3, .name, 20) == 1_200 && budget(hinted, 4, .name, 20) == 1_200)
        #expect(budget(hinted, 4, .price, 20) == nil)
        // One letter walks by its count alone, whatever the sort.
        #expect(budget(SearchPrefixCounts.Kept(products: 600_000, nameWalkSteps: nil), 1, .price, 20) == 15_000)
        #expect(budget(SearchPrefixCounts.Kept(products: 100, nameWalkSteps: 3), 1, .name, 20) == nil)
    }

    /// Counts the one-letter prefixes in the index and marks only them exact, as the writes and recounts of a
    /// server from before `v12-search-counts-two-letters` do.
    static func countOneLetterAsBeforeTwoLetters(_ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO search_prefix_count (prefix, products)
            SELECT p, (SELECT count(*) FROM product_fts WHERE product_fts MATCH '"' || p || '"*')
            FROM (SELECT DISTINCT substr(term, 1, 1) AS p FROM product_fts_terms);
            UPDATE search_text_version SET counted = version;
            """)
    }

    @Test func aDatabaseFromBeforeTwoLettersHasThemCountedAndHinted() async throws {
        let queue = try DatabaseQueue(configuration: ShopDatabase.configuration)
        try ShopSchema.migrator.migrate(queue, upTo: "v11-product-key-changes")
        // Counted as before this migration: one letter (v7 counted them; it now leaves them to v12).
        try await queue.write { try Self.countOneLetterAsBeforeTwoLetters($0) }
        #expect(try await queue.read { try Int.fetchOne($0, sql: "SELECT MAX(length(prefix)) FROM search_prefix_count") } == 1)
        try ShopSchema.migrator.migrate(queue)
        let migrated = SearchPrefixCountsTests(database: ShopDatabase(path: ":memory:", writer: queue))
        try await migrated.expectCountsAreTheIndexs("after the migration")
        #expect(try await queue.read { try Int.fetchOne($0, sql: "SELECT MAX(length(prefix)) FROM search_prefix_count") } == SearchPrefixCounts.longestPrefix)
    }

    @Test func aDatabaseCountedByTwoLettersIsCountedAgainWithItsStarts() async throws {
        let queue = try DatabaseQueue(configuration: ShopDatabase.configuration)
        try ShopSchema.migrator.migrate(queue, upTo: "v12-search-counts-two-letters")
        try await queue.write { db in
            // 600 products more, named in no order; then counted as `v12` counted, one count made wrong on purpose.
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600)
                INSERT INTO product (seq, id, name, description, price, categoryId, stock, maxPerOrder, createdAt)
                SELECT 10000 + i, 'g-' || i, (CASE i % 7 WHEN 0 THEN 'Stool ' WHEN 1 THEN 'Oak Desk ' WHEN 2 THEN 'Zebra Mug '
                    ELSE 'Lamp ' END) || ((i * 7919) % 600), 'plain', 100, 'office', 1, 1, 0 FROM n;
                INSERT INTO search_prefix_count (prefix, products)
                SELECT p, (SELECT count(*) FROM product_fts WHERE product_fts MATCH '"' || p || '"*')
                FROM (SELECT DISTINCT substr(term, 1, 1) AS p FROM product_fts_terms
                      UNION SELECT DISTINCT substr(term, 1, 2) FROM product_fts_terms);
                UPDATE search_prefix_count SET products = products + 1 WHERE prefix = 'z';
                UPDATE search_text_version SET counted = version, counted_two_letters = version;
                """)
        }
        try ShopSchema.migrator.migrate(queue)
        let migrated = SearchPrefixCountsTests(database: ShopDatabase(path: ":memory:", writer: queue))
        try await migrated.expectCountsAreTheIndexs("after the migration")
        let kept = try await migrated.keptForEveryPrefix()
        let walks = try await migrated.expectedNameWalks(kept.map(\.0))
        var started = 0
        for (prefix, kept) in kept {
            let expected = walks[prefix]!
            #expect(kept?.nameWalkStart == expected.start && kept?.nameWalkSteps == expected.steps, "\(prefix)")
            if expected.start != nil { started += 1 }
        }
        #expect(started > 5)
    }

    @Test func aServerFromBeforeTwoLettersWritingLeavesThemUnused() async throws {
        try await database.seed(products: 3_000)
        let before = try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "in") }
        #expect(before != nil)
        // What an older server's delete does: the triggers count it, its writes keep the one-letter counts
        // and mark only them exact.
        try await database.writer.write { db in
            try db.execute(sql: """
                DELETE FROM product WHERE seq IN (
                    SELECT rowid FROM product_fts WHERE product_fts MATCH '"in"*' LIMIT 7);
                DELETE FROM search_prefix_count WHERE length(prefix) = 1;
                """)
            try Self.countOneLetterAsBeforeTwoLetters(db)
        }
        try await database.writer.read { db throws in
            #expect(try SearchPrefixCounts.kept(db, prefix: "in") == nil)
            #expect(try SearchPrefixCounts.kept(db, prefix: "i") != nil)
            let query = ProductQuery(searchText: "in", sort: .name, limit: 20)
            let pages = try [ProductPageReader.Plan.listing, .cheapest].map { try ProductPageReader(query: query, limit: 20, offset: 0, plan: $0).read(db) }
            #expect(pages[0] == pages[1])
            #expect(pages[1].totalCount == before!.products - 7)
        }
        // This server's own writes keep the one-letter counts and leave the two-letter ones unused.
        try await create("Indigo Inkwell", "ink")
        #expect(try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "in") } == nil)
        for prefix in try await prefixes() where prefix.unicodeScalars.count == 1 {
            let kept = try await database.writer.read { try SearchPrefixCounts.products($0, prefix: prefix) }
            #expect(kept == (try await indexCount(prefix)), "\(prefix)")
        }
        try await database.writer.write { try SearchPrefixCounts.recount($0) }
        #expect(try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "in") }?.products == before!.products - 6)
    }
}
