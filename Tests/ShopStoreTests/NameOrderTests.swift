import GRDB
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

    func version() async throws -> Int64 {
        try await database.writer.read { db in try SearchPrefixCounts.versions(db).version }
    }

    @Test func positionsReadAtOneVersionAreNotUsedAtAnother() async throws {
        _ = try await page("oak", plan: .namePositions)
        let before = try await version()
        #expect(database.nameOrder.positions(at: before) != nil)
        // First in name order: the positions read before do not know it.
        let product = try await catalog.create(NewProduct(
            name: "Aaa oak stool", description: "", price: Money(minorUnits: 100), categoryId: "office"))
        let after = try await version()
        #expect(after != before)
        #expect(database.nameOrder.positions(at: after) == nil)
        let cheapest = try await page("oak", plan: .cheapest)
        #expect(cheapest == (try await page("oak", plan: .listing)))
        #expect(cheapest.products.first?.id == product.id)
        // Read again (as the catalog service does after answering), they are used and agree.
        #expect(try await page("oak", plan: .namePositions) == cheapest)
        #expect(database.nameOrder.positions(at: after) != nil)
    }

    @Test func aRenameOrDeleteMadeBehindTheServicesMakesThemStale() async throws {
        _ = try await page("oak", plan: .namePositions)
        let last = try #require(try await page("oak", plan: .listing).products.last)
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE product SET name = 'AAA ' || name WHERE id = ?", arguments: [last.id])
        }
        #expect(database.nameOrder.positions(at: try await version()) == nil)
        let renamed = try await page("oak", plan: .cheapest)
        #expect(renamed.products.first?.id == last.id)
        #expect(renamed == (try await page("oak", plan: .listing)))
        _ = try await page("oak", plan: .namePositions)
        try await database.writer.write { db in try db.execute(sql: "DELETE FROM product WHERE id = ?", arguments: [last.id]) }
        #expect(database.nameOrder.positions(at: try await version()) == nil)
        #expect(try await page("oak", plan: .cheapest) == (try await page("oak", plan: .listing)))
    }

    @Test func seedingCountsAsATextChange() async throws {
        _ = try await page("oak", plan: .namePositions)
        let before = try await version()
        try await database.seed(products: 300)
        let after = try await version()
        #expect(after != before)
        #expect(database.nameOrder.positions(at: after) == nil)
        #expect(try await page("oak", plan: .namePositions) == (try await page("oak", plan: .listing)))
    }

    @Test func theCatalogServiceReadsThemAfterASearchFoundThemStale() async throws {
        let query = ProductQuery(searchText: "oak", sort: .name, limit: 20)
        let version = try await version()
        #expect(database.nameOrder.positions(at: version) == nil)
        let first = try await catalog.page(query)
        // The read runs on a reader connection, started before the answer.
        await database.nameOrder.runningRead?.value
        #expect(database.nameOrder.positions(at: version) != nil)
        #expect(try await catalog.page(query) == first)
    }

    @Test func aMatchWithoutAPositionGivesNoPage() async throws {
        let nameOrder = NameOrder()
        try await database.writer.read { db in try nameOrder.read(db) }
        let positions = try #require(nameOrder.positions(at: try await version()))
        var matches = SeqSet(maximum: 1_000_000)
        matches.insert(1)
        #expect(positions.first(5, of: matches) == [1])
        matches.insert(999_999)
        #expect(positions.first(5, of: matches) == nil)
        #expect(positions.first(0, of: matches) == [])
    }
}
