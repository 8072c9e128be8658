import GRDB
import Randomness
import Shop
import Testing
@testable import ShopStore

/// The name order's positions (``NameOrder``) are used only at the text version they were read at.
@Suite struct NameOrderTests {
    let database: ShopDatabase
    let catalog: any CatalogService

    init() throws {
        database = try ShopDatabase(path: ":memory:")
        catalog = ShopServices.testing(database).catalog
    }

    /// The page of `text` sorted by name, by `plan`, with the database's name order.
    func page(_ text: String, plan: ProductPageReader.Plan, nameOrder: NameOrder? = nil) async throws -> ProductPage {
        let query = ProductQuery(searchText: text, sort: .name, limit: 20)
        return try await database.writer.read { db in
            try ProductPageReader(query: query, limit: 20, offset: 0, nameOrder: nameOrder ?? database.nameOrder, plan: plan).read(db)
        }
    }

    func version() async throws -> NameOrder.Version {
        try await database.writer.read { db in try NameOrder.Version.current(db) }
    }

    @Test func positionsReadAtOneVersionAreNotUsedAtAnother() async throws {
        _ = try await page("oak", plan: .namePositions)
        let before = try await version()
        #expect(database.nameOrder.isCurrent(at: before))
        // First in name order: the positions read before do not know it.
        let product = try await catalog.create(NewProduct(
            name: "Aaa oak stool", description: "", price: Money(minorUnits: 100), categoryId: "office"))
        let after = try await version()
        #expect(after != before)
        #expect(!database.nameOrder.isCurrent(at: after))
        let cheapest = try await page("oak", plan: .cheapest)
        #expect(cheapest == (try await page("oak", plan: .listing)))
        #expect(cheapest.products.first?.id == product.id)
        // Read again (as the catalog service does after answering), they are used and agree.
        #expect(try await page("oak", plan: .namePositions) == cheapest)
        #expect(database.nameOrder.isCurrent(at: after))
    }

    @Test func aRenameOrDeleteMadeBehindTheServicesMakesThemStale() async throws {
        _ = try await page("oak", plan: .namePositions)
        let last = try #require(try await page("oak", plan: .listing).products.last)
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE product SET name = 'AAA ' || name WHERE id = ?", arguments: [last.id])
        }
        #expect(!database.nameOrder.isCurrent(at: try await version()))
        let renamed = try await page("oak", plan: .cheapest)
        #expect(renamed.products.first?.id == last.id)
        #expect(renamed == (try await page("oak", plan: .listing)))
        _ = try await page("oak", plan: .namePositions)
        try await database.writer.write { db in try db.execute(sql: "DELETE FROM product WHERE id = ?", arguments: [last.id]) }
        #expect(!database.nameOrder.isCurrent(at: try await version()))
        #expect(try await page("oak", plan: .cheapest) == (try await page("oak", plan: .listing)))
    }

    @Test func seedingCountsAsATextChange() async throws {
        _ = try await page("oak", plan: .namePositions)
        let before = try await version()
        try await database.seed(products: 300)
        let after = try await version()
        #expect(after != before)
        #expect(!database.nameOrder.isCurrent(at: after))
        #expect(try await page("oak", plan: .namePositions) == (try await page("oak", plan: .listing)))
    }

    @Test func theCatalogServiceReadsThemAfterASearchFoundThemStale() async throws {
        let query = ProductQuery(searchText: "oak", sort: .name, limit: 20)
        let version = try await version()
        #expect(!database.nameOrder.isCurrent(at: version))
        let first = try await catalog.page(query)
        // The read runs on a reader connection, started before the answer.
        await database.nameOrder.runningRead?.value
        #expect(database.nameOrder.isCurrent(at: version))
        #expect(try await catalog.page(query) == first)
    }

    @Test func theCatalogShownSortedByNameHasThemReadBeforeASearch() async throws {
        let version = try await version()
        _ = try await catalog.page(ProductQuery(searchText: "", categoryId: "garden", sort: .name, limit: 20))
        _ = try await catalog.page(ProductQuery(searchText: "", sort: .price, limit: 20))
        #expect(database.nameOrder.runningRead == nil)
        #expect(!database.nameOrder.isCurrent(at: version))
        _ = try await catalog.page(ProductQuery(searchText: "", sort: .name, limit: 20))
        await database.nameOrder.runningRead?.value
        #expect(database.nameOrder.isCurrent(at: version))
        // Current: a page reads them no more.
        _ = try await catalog.page(ProductQuery(searchText: "", sort: .name, limit: 20))
        #expect(database.nameOrder.runningRead == nil)
    }

    @Test func aWantIsMetByANewerReadAndAnOlderPageMarksNone() async throws {
        let nameOrder = NameOrder()
        let old = try await version()
        #expect(nameOrder.positions(at: old) == nil)
        // The text changes (another process, say) before the read that the page asked for begins.
        _ = try await catalog.create(NewProduct(name: "Aaa oak crate", description: "", price: Money(minorUnits: 100), categoryId: "office"))
        try await database.writer.read { db in try nameOrder.read(db) }
        let new = try await version()
        #expect(new.covers(old) && new != old)
        #expect(nameOrder.isCurrent(at: new))
        nameOrder.readIfWanted(from: database.writer)
        #expect(nameOrder.runningRead == nil)
        // A page whose transaction began before that read wants nothing older than what is kept.
        #expect(nameOrder.positions(at: old) == nil)
        nameOrder.readIfWanted(from: database.writer)
        #expect(nameOrder.runningRead == nil)
        // A newer text version is wanted, and read.
        _ = try await catalog.create(NewProduct(name: "Aaa oak shelf", description: "", price: Money(minorUnits: 100), categoryId: "office"))
        let newest = try await version()
        #expect(nameOrder.positions(at: newest) == nil)
        nameOrder.readIfWanted(from: database.writer)
        await nameOrder.runningRead?.value
        #expect(nameOrder.isCurrent(at: newest))
    }

    @Test func aSeqFarPastTheCatalogsSizeIsSearchedBySQLAlone() async throws {
        try await database.writer.write { db in
            // Behind the store: the row's number is a trillion, as no product of the shop's can be.
            try db.execute(sql: "UPDATE product SET rowid = 1000000000000 WHERE id = (SELECT id FROM product ORDER BY name LIMIT 1)")
        }
        let version = try await version()
        // The catalog appears: the positions are read, and kept empty rather than sized by that number.
        _ = try await catalog.page(ProductQuery(searchText: "", sort: .name, limit: 20))
        await database.nameOrder.runningRead?.value
        #expect(database.nameOrder.isCurrent(at: version))
        #expect(database.nameOrder.positions(at: version)?.ranks.isEmpty == true)
        let listed = try await page("oak", plan: .listing)
        #expect(!listed.products.isEmpty)
        #expect(try await page("oak", plan: .cheapest) == listed)
        #expect(try await page("oak", plan: .namePositions) == listed)
        #expect(try await catalog.page(ProductQuery(searchText: "oak", sort: .name, limit: 20)) == listed)
    }

    @Test func aMatchWithoutAPositionGivesNoPage() {
        let positions = NameOrder.Positions(version: NameOrder.Version(text: 0, schema: 0), ranks: [0, 3, 1, 0, 2])
        var matches = SeqSet(maximum: 10)
        for seq: Int64 in [1, 2, 4] { matches.insert(seq) }
        #expect(positions.first(5, of: matches) == [2, 4, 1])
        #expect(positions.first(2, of: matches) == [2, 4])
        #expect(positions.first(0, of: matches) == [])
        matches.insert(3)
        #expect(positions.first(5, of: matches) == nil)
        var beyond = SeqSet(maximum: 10)
        beyond.insert(7)
        #expect(positions.first(1, of: beyond) == nil)
    }

    @Test func theFirstAreTheSmallestRanksWhateverOrderSeqsAndNamesHave() {
        // Ranks 1...n against seqs 1...n in name order, reverse name order and a fixed shuffle.
        let n = 2_000
        var generator = SeededRandom(seed: 16)
        let orders: [[Int32]] = [
            Array(1...Int32(n)), Array((1...Int32(n)).reversed()), Array(1...Int32(n)).shuffled(using: &generator),
        ]
        for order in orders {
            let positions = NameOrder.Positions(version: NameOrder.Version(text: 0, schema: 0), ranks: [0] + order)
            var matches = SeqSet(maximum: Int64(n))
            for seq in stride(from: 1, through: n, by: 3) { matches.insert(Int64(seq)) }
            let expected = matches.members.sorted { order[Int($0) - 1] < order[Int($1) - 1] }
            for count in [1, 2, 50, 667, NameOrder.Positions.deepest] {
                #expect(positions.first(count, of: matches) == Array(expected.prefix(count)))
            }
        }
    }

    @Test func namesEqualButForCaseAreOrderedByIdAgainstTheirSeqs() async throws {
        try await database.writer.write { db in
            // Inserted in the opposite order of their ids, so seq order is not the name order.
            for (id, name) in [("p-tie-9", "Tied Oak Chair"), ("p-tie-5", "TIED OAK CHAIR"), ("p-tie-1", "tied oak chair"), ("p-tie-0", "Tied oak chair")] {
                try db.execute(sql: """
                    INSERT INTO product (id, name, description, price, categoryId, stock, maxPerOrder, createdAt)
                    VALUES (?, ?, '', 100, 'office', 5, 5, 0)
                    """, arguments: [id, name])
            }
        }
        for offset in [0, 1, 2, 3, 5, 19, 20, 21, 500] {
            for limit in [1, 2, 3, 20] {
                let query = ProductQuery(searchText: "tied", sort: .name, offset: offset, limit: limit)
                let pages = try await database.writer.read { db in
                    try [ProductPageReader.Plan.listing, .namePositions].map {
                        try ProductPageReader(query: query, limit: limit, offset: offset, nameOrder: database.nameOrder, plan: $0).read(db)
                    }
                }
                #expect(pages[0] == pages[1], "offset \(offset), limit \(limit)")
            }
        }
        #expect(try await page("tied", plan: .namePositions).products.map(\.id) == ["p-tie-0", "p-tie-1", "p-tie-5", "p-tie-9"])
    }

    @Test func aChangeOfAProductsIdMakesThemStale() async throws {
        // A product nothing refers to (an order line or price point would keep its id).
        let product = try await catalog.create(NewProduct(name: "Aaa oak bench", description: "", price: Money(minorUnits: 100), categoryId: "office"))
        _ = try await page("oak", plan: .namePositions)
        let before = try await version()
        #expect(database.nameOrder.isCurrent(at: before))
        try await database.writer.write { db in
            try db.execute(sql: "DELETE FROM price_point WHERE productId = ?", arguments: [product.id])
            try db.execute(sql: "UPDATE product SET id = 'zz-' || id WHERE id = ?", arguments: [product.id])
        }
        #expect(try await version() != before)
        #expect(!database.nameOrder.isCurrent(at: try await version()))
        // The seq by any of its names.
        for name in ["seq", "rowid", "_rowid_", "oid"] {
            let unchanged = try await version()
            try await database.writer.write { db in
                try db.execute(sql: "UPDATE product SET \(name) = \(name) + 1000 WHERE id = ?", arguments: ["zz-" + product.id])
            }
            #expect(try await version() != unchanged, "\(name)")
        }
    }

    @Test func pagesBeyondTheDeepestAreFoundByTheOtherPlans() async throws {
        // More matches of "a" than the deepest page by positions reaches.
        try await database.seed(products: 3 * NameOrder.Positions.deepest)
        let deep = NameOrder.Positions.deepest
        let query = ProductQuery(searchText: "a", sort: .name, offset: deep - 10, limit: 20)
        let pages = try await database.writer.read { db in
            try [ProductPageReader.Plan.listing, .namePositions, .cheapest].map {
                try ProductPageReader(query: query, limit: 20, offset: deep - 10, nameOrder: database.nameOrder, plan: $0).read(db)
            }
        }
        #expect(pages[0].products.count == 20)
        #expect(pages[0] == pages[1] && pages[0] == pages[2])
    }
}
