import Clocks
import Observation
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

/// The wire layer reads `state` inside `withObservationTracking`; every intent that changes the state
/// must fire the tracking.
@Suite @MainActor struct ObservationTests {
    final class Flag: @unchecked Sendable {
        var fired = false
    }

    func tracking(_ read: () -> Void) -> Flag {
        let flag = Flag()
        withObservationTracking(read) { flag.fired = true }
        return flag
    }

    @Test func readingStateTracksTheQueryAndSelection() async throws {
        let catalog = CatalogServiceDouble()
        catalog.page.returns(ProductPage(products: [Fixture.product(1)], totalCount: 1))
        catalog.categories.returns([Fixture.books])
        let clock = TestClock<Duration>()
        let viewModel = CatalogViewModel(catalog: catalog, events: ShopEvents(), clock: clock)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }

        let selection = tracking { _ = viewModel.state }
        try viewModel.toggleSelection("p-0001")
        #expect(selection.fired)

        let query = tracking { _ = viewModel.state }
        let search = Task { await viewModel.search("p") }
        await settle { query.fired }
        viewModel.close()
        _ = await search.value
    }

    @Test func readingStateTracksQuantityAndFavourite() async throws {
        let catalog = CatalogServiceDouble()
        let favorites = FavoritesServiceDouble()
        catalog.product.returns(Fixture.product(1))
        favorites.isFavorite.returns(false)
        let cart = CartServiceDouble()
        cart.cart.returns(.empty)
        let events = ShopEvents()
        let viewModel = ProductDetailViewModel(productId: "p-0001", catalog: catalog, favorites: favorites,
                                               cart: cart, analytics: AnalyticsServiceDouble(), events: events, session: .signedInForTests(events: events),
                                               clock: TestClock())
        viewModel.appear()
        await settle { viewModel.phase == .loaded }

        let quantity = tracking { _ = viewModel.state }
        try viewModel.incrementQuantity()
        #expect(quantity.fired)
        let favourite = tracking { _ = viewModel.state }
        events.publish(.favoriteChanged(productId: "p-0001", isFavorite: true, shopper: Fixture.shopper))
        #expect(favourite.fired)
        let inCart = tracking { _ = viewModel.state }
        events.publish(.cartChanged(Cart(lines: [Fixture.line(Fixture.product(1), quantity: 1)], tax: .zero, revision: 1), shopper: Fixture.shopper))
        #expect(inCart.fired)
    }
}
