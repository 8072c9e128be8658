import Foundation
@testable import PostgresStore
import Shop
@testable import ShopStore
import Testing

/// Search on PostgreSQL finds what the SQLite store's FTS5 search finds, on the same products and texts:
/// accents, case, CJK, punctuation, phrases, prefixes, and text that looks like an operator or SQL.
@MainActor
@Suite(.enabled(if: TestPostgres.isAvailable, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster to test against (scripts/test.sh starts one)"))
struct PostgresSearchTests {
    /// Products whose names and descriptions exercise the tokenizer (added to the demo catalog).
    static let texts: [(name: String, description: String)] = [
        ("Café Crème Brûlée Torch", "Yo-yo's favourite, 2-in-1 ÉLAN and naïve déjà vu"),
        ("Œuvre Ångström Straße", "l'été, rock'n'roll; e-mail@example.com 3.14"),
        ("Yo Yo Kit", "yo"),
        ("日本 Tea", "緑茶 matcha"),
        ("Snake_case X-Ray C++ Kit", "AT&T 1,000.50 #hash /path\\to tab\there"),
        ("東京タワー・スカイツリー", "한국어 텍스트"),
        ("e\u{301}cole Жёлтый Ме\u{308}д", "Ελληνικά ά Ææ Øø Łł ﬁne"),
        ("ＡＢＣ１２３ İstanbul", "½ inch, ² and Ⅻ, emoji😀here"),
        ("Rustic Oak Shelf", "oak-shelf, solid"),
        ("Zyxel Qwerty Widget", "made of glorp"),
        ("Near Fancy Thing", "or and not"),
    ]

    /// Searches: those of the SQLite store's tests, and more of the same kinds.
    static let searches = [
        "cafe", "CAFÉ", "creme bru", "brulee", "yo-yo", "yo-y", "yo yo", "yo's", "2-in", "2-in-1", "elan na", "naive deja",
        "deja v", "oeuvre", "œuv", "angstr", "strasse", "straß", "l'e", "l'ete", "rock'n", "e-mail", "mail@ex", "3.1",
        "日本", "緑", "tea", "é", "e", "c", "y", "2", "ß", "o", "œ",
        "snake_c", "snake case", "x-ra", "c++", "at&t", "1,000", "000.5", "#hash", "path\\to", "tab", "here", "t",
        "東京", "タワー", "スカイ", "한국", "텍", "ecole", "école", "жёл", "жел", "мед", "мёд", "ελλην", "ελληνικα", "ae", "æ", "ø", "ł", "l",
        "fi", "ﬁ", "abc", "ａｂｃ", "istanbul", "½", "²", "ⅻ", "xii", "emoji", "here",
        "oak sh", "oa sh", "oak-sh", "shelf oak", "oak-shelf", "oak shelf solid", "solid oak", "tea x", "tea matcha", "kit yo", "yo kit",
        "zyxel", "qwer", "glorp zyx", "qwer zyxel", "NEAR", "or and", "-fancy", "\"fancy\"",
        #"""#, #""zyxel"#, "zyxel\"", "*", "zyx*", "NEAR(zyxel qwerty)", "zyxel NEAR qwerty", "-zyxel", "zyxel -qwerty",
        "zyxel OR 1=1", "'; DROP TABLE product; --", "name:zyxel", "^zyxel", "(zyxel", "zyxel AND", "\\", "%", "_", "a:* | b", "x <-> y",
        "", "  ", "-", "  - * ", "a", "s", "lamp", "b k", "zzzz", String(repeating: "long", count: 300),
    ]

    @Test func searchesFindWhatTheSQLiteStoreFinds() async throws {
        let twins = try await CatalogTwins.make()
        for (name, description) in Self.texts {
            let new = NewProduct(name: name, description: description, price: Money(minorUnits: 100), categoryId: "office")
            #expect(try await twins.postgres.catalog.create(new) == (try await twins.sqlite.catalog.create(new)))
        }
        for text in Self.searches {
            let query = ProductQuery(searchText: text, sort: .name, limit: 100)
            #expect(try await twins.postgres.catalog.page(query) == (try await twins.sqlite.catalog.page(query)), "\(text)")
        }
        // Text that looks like an operator or SQL is searched as text: it matches nothing here, not everything.
        for text in ["'; DROP TABLE product; --", "zyxel OR 1=1", "x <-> y", "*"] {
            #expect(try await twins.postgres.catalog.page(ProductQuery(searchText: text)).totalCount <= 1, "\(text)")
        }
        #expect(try await twins.postgres.database.productCount() == DemoCatalog.defaultProductCount + Self.texts.count)
    }

    @Test func searchesCombineWithCategorySortAndPagingAsInSQLite() async throws {
        let twins = try await CatalogTwins.make()
        var compared = 0
        for text in ["a", "e", "s", "oak", "st", "b k", "lamp", "zzzz", "", "-"] {
            for categoryId in [nil, "books", "electronics"] {
                for sort in [ProductSort.name, .price, .newest] {
                    for offset in [0, 7, 20] {
                        let query = ProductQuery(searchText: text, categoryId: categoryId, sort: sort, offset: offset, limit: 20)
                        #expect(try await twins.postgres.catalog.page(query) == (try await twins.sqlite.catalog.page(query)), "\(query)")
                        compared += 1
                    }
                }
            }
        }
        #expect(compared == 270)
    }

    @Test func changedAndDeletedProductsAreFoundByTheirNewText() async throws {
        let server = CatalogServer(try await TestPostgres.freshDatabase())
        let product = try await server.catalog.create(NewProduct(
            name: "Zyxel Qwerty Widget", description: "", price: Money(minorUnits: 100), categoryId: "office"))
        _ = try await server.catalog.update(id: product.id, ProductUpdate(name: "Quokka Lamp", description: "Glorp inside"))
        #expect(try await server.catalog.page(ProductQuery(searchText: "zyxel")).totalCount == 0)
        #expect(try await server.catalog.page(ProductQuery(searchText: "quokka gl")).products.map(\.id) == [product.id])
        try await server.catalog.delete(ids: [product.id])
        #expect(try await server.catalog.page(ProductQuery(searchText: "quokka")).totalCount == 0)
    }

    /// What the index stores for a text: lower-case tokens, Latin accents removed, other letters kept.
    @Test func textIsFoldedAsUnicode61FoldsIt() async throws {
        let database = try await TestPostgres.freshDatabase()
        let cases: [(text: String, tokens: [String])] = [
            ("Café Crème, naïve DÉJÀ-vu!", ["cafe", "creme", "naive", "deja", "vu"]),
            ("Œuvre Ångström Straße Ææ Øø Łł ﬁ", ["œuvre", "angstrom", "straße", "ææ", "øø", "łł", "ﬁ"]),
            ("e\u{301}cole Ме\u{308}д Жёлтый ά", ["ecole", "мед", "жёлтый", "ά"]),
            ("東京タワー・スカイツリー 한국어", ["東京タワー", "スカイツリー", "한국어"]),
            ("ＡＢＣ１２３ İstanbul ½² Ⅻ 😀x_y", ["ａｂｃ１２３", "istanbul", "½²", "ⅻ", "x", "y"]),
            ("  -- ", []),
        ]
        for (text, tokens) in cases {
            let stored = try await database.read { try await $0.value("SELECT storefront_search_tokens(\(text))", as: [String].self) }
            #expect(stored == tokens, "\(text)")
        }
    }

    /// The query is made of phrases of tokens: the last token a prefix, a word without tokens left out.
    @Test func queriesArePhrasesOfTokens() async throws {
        let database = try await TestPostgres.freshDatabase()
        let cases: [(words: [String], query: String?)] = [
            (["oak", "Shelf"], "'oak' & 'shelf':*"),
            (["yo-yo's", "tea"], "'yo' <-> 'yo' <-> 's' & 'tea':*"),
            (["tea", "ि"], "'tea'"),  // the last word has no token: no prefix (as FTS5 reads `"tea" "ि"*`)
            (["ि", "x"], "'x':*"),
            (["ि"], nil),  // matches nothing
            (["'; DROP", "TABLE--"], "'drop' & 'table':*"),
            ([String(repeating: "é", count: 600)], "'\(String(repeating: "e", count: PostgresSearch.longestToken))':*"),
        ]
        for (words, query) in cases {
            let built = try await database.read { try await $0.value("SELECT storefront_search_query(\(words))::text", as: String?.self) } ?? nil
            #expect(built == query, "\(words)")
        }
    }

    @Test func filterKeepsTheWordsTheSQLiteStoreSearches() {
        #expect(PostgresSearch.filter(for: " ") == .everything)
        #expect(PostgresSearch.filter(for: "  - * ") == .nothing)
        #expect(PostgresSearch.filter(for: #"oak - "shelf"#) == .words(["oak", #""shelf"#]))
    }
}
