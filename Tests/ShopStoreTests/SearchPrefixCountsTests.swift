import Foundation
import GRDB
import Shop
import Testing
@testable import ShopStore

/// A search that walks products testing their text (``ProductTextMatcher``) finds what the index finds, and
/// the kept counts of one- and two-letter searches (``SearchPrefixCounts``) are the index's counts, or unused.
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
        try await database.writer.write { try SearchPrefixCounts.recount($0) }
        try await expectCountsAreTheIndexs("after the recount")
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

    /// Where a walk in name order has found `SearchPrefixCounts.walkHintMatches` matches of `prefix`, counted
    /// from the index's matches and the name order; nil past what the recount walks (the largest count / 40).
    func expectedNameWalkSteps(_ prefix: String, largest: Int) async throws -> Int? {
        try await database.writer.read { db in
            let matches = Set(try Int64.fetchAll(db, sql: "SELECT rowid FROM product_fts WHERE product_fts MATCH ?", arguments: ["\"\(prefix)\"*"]))
            let order = try Int64.fetchAll(db, sql: "SELECT p.seq FROM product p ORDER BY \(ProductPageReader.byName)")
            var found = 0
            for (index, seq) in order.enumerated() where matches.contains(seq) {
                found += 1
                if found == SearchPrefixCounts.walkHintMatches {
                    return index + 1 <= largest / ProductPageReader.textWalkStepsPerCollectedMatch ? index + 1 : nil
                }
            }
            return nil
        }
    }

    @Test func theWalksHintIsWhereAPageOfMatchesFillsAlongTheNameOrder() async throws {
        try await database.seed(products: 3_000)
        let all = try await prefixes()
        let kept = try await database.writer.read { db in try all.map { prefix in (prefix, try SearchPrefixCounts.kept(db, prefix: prefix)) } }
        let largest = kept.compactMap { $0.1?.products }.max() ?? 0
        #expect(largest >= 40 * 20, "a walk of at least a page is measured")
        var hinted = 0
        for (prefix, kept) in kept {
            let expected = try await expectedNameWalkSteps(prefix, largest: largest)
            #expect(kept?.nameWalkSteps == expected, "\(prefix)")
            if expected != nil { hinted += 1 }
        }
        #expect(hinted > 5)
        // Written since the recount: counted, not hinted.
        try await create("Quokka Xylophone", "x marks the spot")
        #expect(try await database.writer.read { try SearchPrefixCounts.kept($0, prefix: "xy") } == SearchPrefixCounts.Kept(products: 1, nameWalkSteps: nil))
    }

    @Test func twoLetterSearchesFindThePageAnyPlanFindsWhateverTheHint() async throws {
        try await database.seed(products: 3_000)
        let twoLetters = try await prefixes().filter { $0.unicodeScalars.count == 2 }
        #expect(twoLetters.count > 20)
        // The hints as measured, none, and wrong: far too short, and far too long.
        for hints in ["name_walk_steps", "NULL", "1", "100000"] {
            try await database.writer.write { db in try db.execute(sql: "UPDATE search_prefix_count SET name_walk_steps = \(hints)") }
            for prefix in twoLetters {
                for (offset, limit) in [(0, 20), (0, 5), (10, 10), (20, 20)] {
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
        #expect(budget(hinted, 3, .name, 20) == nil)
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
        #expect(try await queue.read { try Int.fetchOne($0, sql: "SELECT MAX(length(prefix)) FROM search_prefix_count") } == 2)
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
