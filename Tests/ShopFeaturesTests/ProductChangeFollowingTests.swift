import Clocks
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

/// The ViewModels that show a product follow `.productChanged`: a product page shows the new price and
/// stock, catalog rows change in place (and the list reloads when the change can move a row), and a cart
/// holding the product loads again (its line's unit price is the product's current price, which checkout
/// charges).
@Suite @MainActor struct ProductChangeFollowingTests {
    let catalog = CatalogServiceDouble()
    let cart = CartServiceDouble()
    let orders = OrderServiceDouble()
    let favorites = FavoritesServiceDouble()
    let analytics = AnalyticsServiceDouble()
    let events = ShopEvents()
    let clock = TestClock<Duration>()
    let product = Fixture.product(7, price: 1_250, stock: 4, maxPerOrder: 3)
    let other = Fixture.product(8, price: 900)

    var repriced: Product {
        var changed = product
        changed.price = Money(minorUnits: 999)
        changed.stock = 2
        return changed
    }

    @Test func aProductPageShowsTheNewPriceAndStock() async throws {
        cart.cart.returns(.empty)
        catalog.product.returns(product)
        favorites.isFavorite.returns(false)
        let detail = ProductDetailViewModel(
            productId: product.id, catalog: catalog, favorites: favorites, cart: cart, analytics: analytics, events: events,
            session: .signedInForTests(events: events), clock: clock)
        detail.appear()
        await settle { detail.phase == .loaded && detail.inCart != nil && detail.isFavorite != nil }
        try detail.incrementQuantity()
        try detail.incrementQuantity()
        events.publish(.productChanged(other))
        #expect(detail.product == product)
        events.publish(.productChanged(repriced))
        #expect(detail.product == repriced)
        #expect(detail.state.quantity == 2)  // clamped to the new stock
        #expect(detail.state.totalPrice == Money(minorUnits: 1_998))
    }

    @Test func catalogRowsChangeInPlaceAndAPriceSortedListReloads() async throws {
        catalog.categories.returns([Fixture.books, Fixture.garden])
        catalog.page.returns(ProductPage(products: [product, other], totalCount: 2))
        let list = CatalogViewModel(catalog: catalog, events: events, clock: clock)
        list.appear()
        await settle { list.phase == .loaded && catalog.categories.calls.count == 1 }
        events.publish(.productChanged(repriced))
        #expect(list.products == [repriced, other])
        await events.settled()
        #expect(catalog.page.calls.count == 1)  // sorted by name: nothing can move

        _ = await list.setSort(.price)
        let pages = catalog.page.calls.count
        var cheaper = repriced
        cheaper.price = Money(minorUnits: 100)
        catalog.page.returns(ProductPage(products: [cheaper, other], totalCount: 2))
        events.publish(.productChanged(cheaper))
        await events.settled()
        #expect(catalog.page.calls.count == pages + 1)
        #expect(list.products == [cheaper, other])
    }

    @Test func aCartHoldingTheProductLoadsAgainWithItsNewPrice() async throws {
        let before = Cart(lines: [Fixture.line(product, quantity: 2)], tax: .zero, revision: 4)
        let after = Cart(lines: [Fixture.line(repriced, quantity: 2)], tax: .zero, revision: 4)
        cart.cart.returns(before)
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: .signedInForTests(events: events))
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        events.publish(.productChanged(other))
        await events.settled()
        #expect(cart.cart.calls.count == 1)  // not in the cart: nothing to load
        cart.cart.returns(after)
        events.publish(.productChanged(repriced))
        await events.settled()
        #expect(viewModel.lines == after.lines)
        #expect(viewModel.state.totals.subtotal == Money(minorUnits: 1_998))
    }

    @Test func theDashboardShowsTheNewPriceAndDropsARecommendationOutOfStock() async throws {
        let recommendations = RecommendationServiceDouble()
        let featured = Fixture.product(1, featured: true)
        let suggested = [Fixture.product(2), Fixture.product(3)]
        catalog.featured.returns([featured])
        catalog.categories.returns([Fixture.books])
        orders.recentOrders.returns([])
        recommendations.recommendations.returns(suggested)
        analytics.trending.returns([])
        let dashboard = DashboardViewModel(
            catalog: catalog, orders: orders, recommendations: recommendations, analytics: analytics, events: events,
            session: .signedInForTests(events: events))
        dashboard.appear()
        await settle { dashboard.featured.phase == .loaded && dashboard.recommended.phase == .loaded }

        var cheaper = featured
        cheaper.price = Money(minorUnits: 1)
        events.publish(.productChanged(cheaper))
        #expect(dashboard.featured.items == [cheaper])
        #expect(recommendations.recommendations.calls.count == 1)

        var soldOut = suggested[0]
        soldOut.stock = 0
        recommendations.recommendations.returns([suggested[1]])
        events.publish(.productChanged(soldOut))
        await events.settled()
        #expect(dashboard.recommended.items == [suggested[1]])
    }

    @Test func theDashboardShowsTheNewPriceInTrendingAndRecountsCategoriesOnAMove() async throws {
        let recommendations = RecommendationServiceDouble()
        catalog.featured.returns([])
        catalog.categories.returns([Fixture.books, Fixture.garden])
        orders.recentOrders.returns([])
        recommendations.recommendations.returns([])
        analytics.trending.returns([TrendingProduct(product: product, views: 3, cartAdds: 1)])
        let dashboard = DashboardViewModel(
            catalog: catalog, orders: orders, recommendations: recommendations, analytics: analytics, events: events,
            session: .signedInForTests(events: events))
        dashboard.appear()
        await settle { dashboard.trending.phase == .loaded && dashboard.categories.phase == .loaded }

        events.publish(.productChanged(repriced))
        #expect(dashboard.trending.items == [TrendingProduct(product: repriced, views: 3, cartAdds: 1)])
        await events.settled()
        #expect(catalog.categories.calls.count == 1)  // same category: the counts stand

        var moved = repriced
        moved.categoryId = "garden"
        let recounted = [
            CategorySummary(category: Fixture.books.category, productCount: 1),
            CategorySummary(category: Fixture.garden.category, productCount: 2),
        ]
        catalog.categories.returns(recounted)
        events.publish(.productChanged(moved))
        events.publish(.productMoved(productId: moved.id, from: "books", to: "garden"))
        await events.settled()
        #expect(dashboard.categories.items == recounted)
        #expect(dashboard.categories.phase == .loaded)
    }

    @Test func aCategoryListReloadsWhenAProductMovesIntoIt() async throws {
        catalog.categories.returns([Fixture.books, Fixture.garden])
        let gardenProduct = Fixture.product(9, category: "garden")
        catalog.page.returns(ProductPage(products: [gardenProduct], totalCount: 1))
        let list = CatalogViewModel(catalog: catalog, events: events, clock: clock)
        list.appear()
        await settle { list.phase == .loaded && catalog.categories.calls.count == 1 }
        _ = try await list.setCategory("garden")
        let pages = catalog.page.calls.count

        events.publish(.productMoved(productId: product.id, from: "garden", to: "books"))
        await events.settled()
        #expect(catalog.page.calls.count == pages)  // moved into another category: nothing to show

        var moved = product
        moved.categoryId = "garden"
        catalog.page.returns(ProductPage(products: [gardenProduct, moved], totalCount: 2))
        events.publish(.productChanged(moved))
        events.publish(.productMoved(productId: moved.id, from: "books", to: "garden"))
        await events.settled()
        #expect(catalog.page.calls.count == pages + 1)
        #expect(list.products == [gardenProduct, moved])
    }
}
