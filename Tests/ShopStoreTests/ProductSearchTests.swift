import Shop
import Testing
@testable import ShopStore

@Suite struct ProductSearchTests {
    let catalog: any CatalogService

    init() throws {
        let database = try ShopDatabase(path: ":memory:")
        catalog = ShopServices.testing(database).catalog
    }

    func create(_ name: String, _ description: String = "") async throws -> Product {
        try await catalog.create(NewProduct(name: name, description: description, price: Money(minorUnits: 100), categoryId: "office"))
    }

    func search(_ text: String) async throws -> [String] {
        try await catalog.page(ProductQuery(searchText: text, limit: 200)).products.map(\.name)
    }

    @Test func filterQuotesEveryWordAndPrefixesTheLast() {
        #expect(ProductSearch.filter(for: "oak shelf") == .match(#""oak" "shelf"*"#))
        #expect(ProductSearch.filter(for: #"say "hi""#) == .match(#""say" """hi"""*"#))
        #expect(ProductSearch.filter(for: "oak - shelf") == .match(#""oak" "shelf"*"#))
        #expect(ProductSearch.filter(for: "  - * ") == .nothing)
        #expect(ProductSearch.filter(for: " ") == .everything)
    }

    @Test func wordsMatchNamesAndDescriptionsWithPrefixOnTheLastWord() async throws {
        _ = try await create("Zyxel Qwerty Widget", "made of glorp")
        #expect(try await search("zyxel") == ["Zyxel Qwerty Widget"])
        #expect(try await search("qwer") == ["Zyxel Qwerty Widget"])
        #expect(try await search("glorp zyx") == ["Zyxel Qwerty Widget"])
        #expect(try await search("qwer zyxel").isEmpty)  // only the last word is a prefix
    }

    @Test(arguments: [
        #"""#, #""zyxel"#, "zyxel\"", "*", "zyx*", "NEAR(zyxel qwerty)", "zyxel NEAR qwerty", "-zyxel", "zyxel -qwerty",
        "zyxel OR 1=1", "'; DROP TABLE product; --", "name:zyxel", "^zyxel", "(zyxel", "zyxel AND", "\\", "%", "_",
    ])
    func operatorsAndSQLAreSearchedAsText(text: String) async throws {
        _ = try await create("Zyxel Qwerty Widget")
        _ = try await create("Near Fancy Thing", "or and not")
        // Must not throw, and must not match everything.
        let names = try await search(text)
        #expect(names.count <= 2)
        #expect(try await catalog.page(ProductQuery()).totalCount == 242)
    }

    @Test func controlCharactersSeparateWordsAsWhitespaceDoes() async throws {
        #expect(ProductSearch.filter(for: "oak\u{0}shelf") == .match(#""oak" "shelf"*"#))
        #expect(ProductSearch.filter(for: "oak\u{7}\u{1B}shelf\u{7F}") == .match(#""oak" "shelf"*"#))
        #expect(ProductSearch.filter(for: "\u{0}\u{85}") == .everything)
        _ = try await create("Zyxel Qwerty Widget")
        // A NUL inside an FTS5 string ended it: "unterminated string", the catalog failed.
        #expect(try await search("zyxel\u{0}qwer") == ["Zyxel Qwerty Widget"])
        #expect(try await search("qwer\u{0}") == ["Zyxel Qwerty Widget"])
    }

    @Test func operatorWordsAreOrdinaryWords() async throws {
        _ = try await create("Near Fancy Thing", "or and not")
        #expect(try await search("NEAR") == ["Near Fancy Thing"])
        #expect(try await search("or and") == ["Near Fancy Thing"])
        #expect(try await search("-fancy") == ["Near Fancy Thing"])
        #expect(try await search("\"fancy\"") == ["Near Fancy Thing"])
    }

    @Test func searchCombinesWithCategorySortAndPaging() async throws {
        let all = try await catalog.page(ProductQuery(searchText: "oak", sort: .price, limit: 200))
        #expect(all.totalCount > 2)
        #expect(all.products.map(\.price) == all.products.map(\.price).sorted())
        let second = try await catalog.page(ProductQuery(searchText: "oak", sort: .price, offset: 1, limit: 1))
        #expect(second.products == [all.products[1]])
        let books = try await catalog.page(ProductQuery(searchText: "oak", categoryId: "books", limit: 200))
        #expect(books.products.allSatisfy { $0.categoryId == "books" })
        #expect(books.totalCount == all.products.filter { $0.categoryId == "books" }.count)
    }

    @Test func deletedProductsLeaveTheIndex() async throws {
        let product = try await create("Zyxel Qwerty Widget")
        try await catalog.delete(ids: [product.id])
        #expect(try await search("zyxel").isEmpty)
    }
}

/// Every plan of ``ProductPageReader`` gives the same pages and totals.
@Suite struct ProductPageReaderTests {
    @Test func walkingAndListingAgreeOnEveryPage() async throws {
        let database = try ShopDatabase(path: ":memory:")
        let categories = try await ShopServices.testing(database).catalog.categories().map(\.category.id)
        let nameOrder = NameOrder()
        var compared = 0
        for text in ["a", "e", "s", "oak", "st", "b k", "lamp", "zzzz", "", "-"] {
            for categoryId in [nil] + categories.prefix(2).map(Optional.some) {
                for sort in [ProductSort.name, .price, .newest] {
                    for offset in [0, 7, 20] {
                        let query = ProductQuery(searchText: text, categoryId: categoryId, sort: sort, offset: offset, limit: 20)
                        let pages = try await database.writer.read { db in
                            try [
                                ProductPageReader.Plan.listing, .walking, .cheapest, .sortingMatches, .walkingAtMost(0), .walkingAtMost(30),
                                .walkingTestingText(nil), .walkingTestingText(0), .walkingTestingText(30),
                            ].map { plan in
                                try ProductPageReader(query: query, limit: 20, offset: offset, plan: plan).read(db)
                            } + [
                                // The positions read, then used by the cheapest plan.
                                ProductPageReader(query: query, limit: 20, offset: offset, nameOrder: nameOrder, plan: .namePositions).read(db),
                                ProductPageReader(query: query, limit: 20, offset: offset, nameOrder: nameOrder, plan: .cheapest).read(db),
                            ]
                        }
                        #expect(pages[0].products.map(\.id) == pages[1].products.map(\.id), "\(query)")
                        #expect(pages[0].totalCount == pages[1].totalCount, "\(query)")
                        #expect(pages[0] == pages[2], "\(query)")
                        for other in pages[3...] { #expect(pages[0] == other, "\(query)") }
                        compared += 1
                    }
                }
            }
        }
        #expect(compared == 270)
    }

    @Test func seqSetCountsEachSeqOnceAndIgnoresSeqsOutOfRange() {
        var set = SeqSet(maximum: 130)
        for seq: Int64 in [0, 1, 63, 64, 65, 127, 128, 130, 64, 131, -1, 10_000] { set.insert(seq) }
        #expect(set.count == 8)
        #expect([0, 1, 63, 64, 65, 127, 128, 130].allSatisfy { set.contains($0) })
        #expect(![2, 62, 66, 129, 131, -1, 10_000].contains { set.contains($0) })
        #expect(set.members == [0, 1, 63, 64, 65, 127, 128, 130])
    }

    @Test func denseMatchesAreWalkedAndSparseOnesListed() {
        #expect(ProductPageReader.prefersWalking(matches: 100_000, products: 100_000, wanted: 20))
        #expect(ProductPageReader.prefersWalking(matches: 2_000, products: 100_000, wanted: 20))
        #expect(!ProductPageReader.prefersWalking(matches: 1_000, products: 100_000, wanted: 20))
        #expect(!ProductPageReader.prefersWalking(matches: 0, products: 0, wanted: 20))
    }
}
