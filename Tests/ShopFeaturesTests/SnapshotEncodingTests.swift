import Foundation
import Shop
import Testing
@testable import ShopFeatures

@Suite struct SnapshotEncodingTests {
    func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func optionalFieldsAreExplicitNullsMoneyIsADecimalStringDatesAreISO8601() throws {
        let state = ProductDetailState(
            phase: .loading, error: nil, product: nil, isFavorite: nil, canToggleFavorite: false, inCart: nil,
            quantity: 1, maxQuantity: 0, totalPrice: nil, canAddToCart: false, isOutOfStock: false,
            isAddingToCart: false, didAddToCart: false)
        #expect(try json(state) == """
            {"canAddToCart":false,"canToggleFavorite":false,"didAddToCart":false,"error":null,"inCart":null,\
            "isAddingToCart":false,"isFavorite":null,"isOutOfStock":false,"maxQuantity":0,"phase":"loading",\
            "product":null,"quantity":1,"totalPrice":null}
            """)

        let summary = ProductSummary(Fixture.product(1, price: 1_999))
        #expect(try json(summary) == """
            {"category":"books","createdAt":"2025-06-01T01:00:00Z","id":"p-0001","inStock":true,"isFeatured":false,\
            "name":"Product 1","price":"19.99"}
            """)
    }

    @Test func cartLinesCarryNoTotalAndTheFourFiguresAreOneObject() throws {
        let lamp = Fixture.product(1, price: 40_099)
        let cart = Cart(lines: [Fixture.line(lamp, quantity: 2)], tax: Money(minorUnits: 15_238), revision: 1)
        let state = CartState(
            phase: .loaded, error: nil, lines: cart.lines.map(CartLineSnapshot.init), totals: CartTotals(cart),
            checkoutPhase: .idle, checkoutError: nil, lastOrder: nil, notices: [])
        #expect(try json(state) == """
            {"checkoutError":null,"checkoutPhase":"idle","error":null,"lastOrder":null,\
            "lines":[{"name":"Product 1","productId":"p-0001","quantity":2,"unitPrice":"400.99"}],"notices":[],"phase":"loaded",\
            "totals":{"itemCount":2,"subtotal":"801.98","tax":"152.38","total":"954.36"}}
            """)
    }

    @Test func statesRoundTrip() throws {
        let state = CatalogState(
            phase: .failed, error: ErrorInfo(message: "Down", retryable: true), query: "oak", category: nil,
            sort: .newest, products: [ProductSummary(Fixture.product(1))], totalCount: 3, hasMore: true,
            selection: ["p-0001"], loadMorePhase: .failed, loadMoreError: ErrorInfo(message: "Page down", retryable: true))
        let data = try JSONEncoder().encode(state)
        #expect(try JSONDecoder().decode(CatalogState.self, from: data) == state)
        #expect(try json(state).contains(#""category":null"#))
    }
}
