import Clocks
import Foundation
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

/// What the product page and the cart record through the analytics service: only what happened (a stored
/// change, a loaded product), by the session's shopper, at the session's now.
@Suite @MainActor struct AnalyticsRecordingTests {
    let catalog = CatalogServiceDouble()
    let favorites = FavoritesServiceDouble()
    let cart = CartServiceDouble()
    let orders = OrderServiceDouble()
    let analytics = AnalyticsServiceDouble()
    let events = ShopEvents()
    let product = Fixture.product(7, price: 1_250, stock: 4, maxPerOrder: 3)

    func event(_ kind: AnalyticsEvent.Kind, _ productId: String? = nil, quantity: Int? = nil) -> AnalyticsEvent {
        AnalyticsEvent(kind: kind, productId: productId, quantity: quantity, shopper: Fixture.shopper, at: Fixture.date)
    }

    func productPage() async -> ProductDetailViewModel {
        catalog.product.returns(product)
        favorites.isFavorite.returns(false)
        cart.cart.returns(.empty)
        let viewModel = ProductDetailViewModel(
            productId: product.id, catalog: catalog, favorites: favorites, cart: cart, analytics: analytics,
            events: events, session: .signedInForTests(events: events), clock: TestClock())
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        return viewModel
    }

    @Test func aProductPageRecordsOneViewPerOpeningNotPerLoad() async throws {
        let viewModel = await productPage()
        #expect(analytics.events == [event(.productViewed, product.id)])

        #expect(await viewModel.refresh() == .completed)
        events.publish(.shopperDataChanged(Fixture.shopper))
        await events.settled()
        #expect(analytics.events == [event(.productViewed, product.id)])

        viewModel.close()
        viewModel.appear()
        await settle { analytics.events.count == 2 }
        #expect(analytics.events == [event(.productViewed, product.id), event(.productViewed, product.id)])
    }

    @Test func aProductThatFailsToLoadRecordsNoView() async {
        catalog.product.fails(ShopError.productNotFound("p-9999"))
        favorites.isFavorite.returns(false)
        cart.cart.returns(.empty)
        let viewModel = ProductDetailViewModel(
            productId: "p-9999", catalog: catalog, favorites: favorites, cart: cart, analytics: analytics,
            events: events, session: .signedInForTests(events: events), clock: TestClock())
        viewModel.appear()
        await settle { viewModel.phase.name == .failed }
        #expect(analytics.events.isEmpty)
    }

    @Test func steppingTheQuantityRecordsEachStepButNotARefusedOne() async throws {
        let viewModel = await productPage()
        try viewModel.incrementQuantity()
        try viewModel.incrementQuantity()
        #expect(throws: ShopError.self) { try viewModel.incrementQuantity() }  // at the maximum, 3
        try viewModel.decrementQuantity()

        #expect(analytics.events.dropFirst() == [
            event(.quantityChanged, product.id, quantity: 2), event(.quantityChanged, product.id, quantity: 3),
            event(.quantityChanged, product.id, quantity: 2),
        ])
    }

    @Test func aFavouriteIsRecordedOnlyWhenStored() async throws {
        let viewModel = await productPage()
        favorites.setFavorite.fails(ShopError.serviceUnavailable("favorites"))
        try await viewModel.toggleFavorite()  // reverted, shown in error
        favorites.setFavorite.returns(())
        try await viewModel.toggleFavorite()
        try await viewModel.toggleFavorite()

        #expect(analytics.events.dropFirst() == [event(.favoriteAdded, product.id), event(.favoriteRemoved, product.id)])
    }

    @Test func anAddToCartIsRecordedWithItsUnitsOnlyWhenStored() async throws {
        let viewModel = await productPage()
        try viewModel.incrementQuantity()
        cart.add.fails(ShopError.quantityExceedsStock(product.id, name: product.name, requested: 5, available: 4))
        await #expect(throws: ShopError.self) { try await viewModel.addToCart() }
        cart.add.returns(Cart(lines: [Fixture.line(product, quantity: 2)], tax: .zero, revision: 1))
        try await viewModel.addToCart()

        #expect(analytics.events.dropFirst(2) == [event(.addedToCart, product.id, quantity: 2)])
    }

    func cartScreen(_ shown: Cart) async -> CartViewModel {
        cart.cart.returns(shown)
        let viewModel = CartViewModel(
            cart: cart, orders: orders, analytics: analytics, events: events, session: .signedInForTests(events: events))
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        return viewModel
    }

    @Test func theCartRecordsStoredQuantityChangesAddsAndTheCheckout() async throws {
        let lines = [Fixture.line(product, quantity: 2)]
        let viewModel = await cartScreen(Cart(lines: [Fixture.line(product, quantity: 1)], tax: .zero, revision: 1))
        cart.setQuantity.fails(ShopError.quantityExceedsMaximum(product.id, name: product.name, requested: 9, maximum: 3))
        await #expect(throws: ShopError.self) { try await viewModel.setQuantity(productId: product.id, quantity: 9) }
        cart.setQuantity.returns(Cart(lines: lines, tax: .zero, revision: 2))
        try await viewModel.setQuantity(productId: product.id, quantity: 2)
        cart.add.returns(Cart(lines: lines + [Fixture.line(Fixture.product(1), quantity: 1)], tax: .zero, revision: 3))
        try await viewModel.add(productId: "p-0001", quantity: 1)
        let order = Fixture.order(1, lines: lines + [Fixture.line(Fixture.product(1), quantity: 1)])
        orders.placeOrder.handle { [events] _ in
            await events.publish(.cartChanged(Cart(lines: [], tax: .zero, revision: 4), shopper: Fixture.shopper))
            return order
        }
        try await viewModel.checkout()

        #expect(analytics.events == [
            event(.quantityChanged, product.id, quantity: 2), event(.addedToCart, "p-0001", quantity: 1),
            event(.checkout, quantity: 3),
        ])
    }

    @Test func aFailedCheckoutRecordsNothing() async throws {
        let viewModel = await cartScreen(Cart(lines: [Fixture.line(product, quantity: 1)], tax: .zero, revision: 1))
        orders.placeOrder.fails(ShopError.serviceUnavailable("orders"))
        try await viewModel.checkout()
        #expect(viewModel.checkoutPhase.name == .failed)
        #expect(analytics.events.isEmpty)
    }
}
