import Foundation
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

@Suite @MainActor struct DashboardViewModelTests {
    let catalog = CatalogServiceDouble()
    let orders = OrderServiceDouble()
    let recommendations = RecommendationServiceDouble()
    let analytics = AnalyticsServiceDouble()
    let events = ShopEvents()
    let featured = [Fixture.product(1, featured: true)]
    let suggested = [Fixture.product(2), Fixture.product(3)]
    let trending = [TrendingProduct(product: Fixture.product(6), views: 4, cartAdds: 2),
                    TrendingProduct(product: Fixture.product(2), views: 7, cartAdds: 0)]
    let pastOrders = [Fixture.order(2, lines: [Fixture.line(Fixture.product(4), quantity: 1)]),
                      Fixture.order(1, lines: [Fixture.line(Fixture.product(5), quantity: 2)])]

    func makeViewModel() -> DashboardViewModel {
        DashboardViewModel(
            catalog: catalog, orders: orders, recommendations: recommendations, analytics: analytics, events: events,
            session: .signedInForTests(events: events))
    }

    func setUpServices() {
        catalog.featured.returns(featured)
        catalog.categories.returns([Fixture.books, Fixture.garden])
        orders.recentOrders.returns(pastOrders)
        recommendations.recommendations.returns(suggested)
        analytics.trending.returns(trending)
    }

    func section<Item, Wire>(_ items: [Item], _ transform: (Item) -> Wire) -> SectionState<Wire> {
        SectionState(phase: .loaded, error: nil, items: items.map(transform))
    }

    var loaded: DashboardState {
        DashboardState(
            featured: section(featured, ProductSummary.init),
            categories: section([Fixture.books, Fixture.garden], CategoryCount.init),
            recentOrders: section(pastOrders, OrderSnapshot.init),
            recommended: section(suggested, ProductSummary.init),
            trending: section(trending, TrendingItem.init))
    }

    func appeared() async -> DashboardViewModel {
        setUpServices()
        let viewModel = makeViewModel()
        viewModel.appear()
        await settle { viewModel.state == loaded }
        return viewModel
    }

    @Test func loadsTheFiveSectionsInParallel() async {
        let gate = Gate()
        catalog.featured.handle { [featured] _ in await gate.wait(); return featured }
        catalog.categories.handle { _ in await gate.wait(); return [Fixture.books, Fixture.garden] }
        orders.recentOrders.handle { [pastOrders] _ in await gate.wait(); return pastOrders }
        recommendations.recommendations.handle { [suggested] _ in await gate.wait(); return suggested }
        analytics.trending.handle { [trending] _ in await gate.wait(); return trending }
        let viewModel = makeViewModel()

        viewModel.appear()

        let loading = SectionState<ProductSummary>(phase: .loading, error: nil, items: [])
        #expect(viewModel.state.featured == loading)
        #expect(viewModel.state.recommended == loading)
        #expect(viewModel.state.recentOrders.phase == .loading)
        #expect(viewModel.state.trending.phase == .loading)
        await settle { gate.waiting == 5 }
        gate.open()
        await settle { viewModel.state == loaded }
        #expect(orders.recentOrders.calls == [3])
        // The last 24 hours before the session's now, the top 5.
        #expect(analytics.trending.calls == [.init(since: Fixture.date.addingTimeInterval(-86_400), limit: 5)])
    }

    @Test func cancellingAReloadShowsThePhasesItReplaced() async {
        let viewModel = await appeared()
        let gate = Gate()
        catalog.featured.handle { [featured] _ in await gate.wait(); return featured }
        let reload = Task { await viewModel.reload() }
        await settle { viewModel.state.featured.phase == .loading && gate.waiting == 1 }

        reload.cancel()
        gate.open()
        #expect(await reload.value == .cancelled)

        #expect(viewModel.state == loaded)
    }

    @Test func aFailingSectionFailsAlone() async throws {
        setUpServices()
        recommendations.recommendations.fails(ShopError.serviceUnavailable("recommendations"))
        let viewModel = makeViewModel()
        viewModel.appear()
        await settle { viewModel.state.recommended.phase == .failed && viewModel.state.featured.phase == .loaded }
        var expected = loaded
        expected.recommended = SectionState(
            phase: .failed, error: ErrorInfo(message: ShopError.serviceUnavailable("recommendations").message, retryable: true),
            items: [])
        await settle { viewModel.state == expected }

        recommendations.recommendations.returns(suggested)
        #expect(try await viewModel.reloadSection(.recommended) == .completed)
        #expect(viewModel.state == loaded)
        #expect(catalog.featured.calls.count == 1)
    }

    @Test func reloadReloadsEverySection() async {
        let viewModel = await appeared()
        #expect(await viewModel.reload() == .completed)
        #expect(viewModel.state == loaded)
        #expect(catalog.featured.calls.count == 2)
        #expect(catalog.categories.calls.count == 2)
        #expect(orders.recentOrders.calls.count == 2)
        #expect(recommendations.recommendations.calls.count == 2)
        #expect(analytics.trending.calls.count == 2)
    }

    @Test func aPlacedOrderJoinsRecentOrdersAtOnce() async {
        let viewModel = await appeared()
        let gate = Gate()
        recommendations.recommendations.handle { [suggested] _ in await gate.wait(); return suggested }
        let order3 = Fixture.order(3, lines: [Fixture.line(Fixture.product(9), quantity: 1)])
        let order4 = Fixture.order(4, lines: [Fixture.line(Fixture.product(9), quantity: 1)])

        events.publish(.orderPlaced(order3, shopper: Fixture.shopper))
        events.publish(.orderPlaced(order4, shopper: Fixture.shopper))

        var expected = loaded
        expected.recentOrders = section([order4, order3, pastOrders[0]], OrderSnapshot.init)
        #expect(viewModel.state == expected)  // recommended refreshes quietly: still loaded
        await settle { gate.waiting >= 1 }
        gate.open()
        await settle { recommendations.recommendations.calls.count == 3 }
        viewModel.close()
        #expect(events.subscriberCount == 1)  // the session's own, not the ViewModel's
    }

    @Test func aSectionReloadReplacedByAnotherSaysItWasSuperseded() async {
        let viewModel = await appeared()
        let gate = Gate()
        catalog.featured.handle { [featured] _ in await gate.wait(); return featured }
        let first = Task { await viewModel.reloadSection(.featured) }
        await settle { gate.waiting == 1 }
        let second = Task { await viewModel.reloadSection(.featured) }
        await settle { gate.waiting == 2 }
        gate.open()
        #expect(await first.value == .superseded)
        #expect(await second.value == .completed)
        #expect(viewModel.state == loaded)
    }

    @Test func aTrendingFailureFailsThatSectionAlone() async throws {
        setUpServices()
        analytics.trending.fails(ShopError.serviceUnavailable("analytics"))
        let viewModel = makeViewModel()
        viewModel.appear()
        var expected = loaded
        expected.trending = SectionState(
            phase: .failed, error: ErrorInfo(message: ShopError.serviceUnavailable("analytics").message, retryable: true),
            items: [])
        await settle { viewModel.state == expected }

        analytics.trending.returns(trending)
        #expect(await viewModel.reloadSection(.trending) == .completed)
        #expect(viewModel.state == loaded)
        #expect(recommendations.recommendations.calls.count == 1)
    }

    @Test func aDeletedProductRefreshesTrendingQuietly() async {
        let viewModel = await appeared()
        let gate = Gate()
        analytics.trending.handle { [trending] _ in await gate.wait(); return [trending[1]] }
        catalog.featured.returns(featured)

        events.publish(.productsDeleted([trending[0].product.id]))

        #expect(viewModel.state.trending == loaded.trending)  // still loaded while it reloads
        await settle { gate.waiting == 1 }
        gate.open()
        var expected = loaded
        expected.trending = section([trending[1]], TrendingItem.init)
        await settle { viewModel.state == expected }
    }

    /// `recommended` is chosen by the categories of the shopper's favourites and orders, among products in
    /// stock: a product moved to another category, or back in stock, refreshes it quietly, as it may change
    /// what a fresh read recommends; cart changes and a new price of a product it does not list cannot, and
    /// reload nothing (a listed product's new price shows in place).
    @Test func aProductMovedOrBackInStockRefreshesRecommendedQuietly() async {
        let viewModel = await appeared()
        events.publish(.cartChanged(.empty, shopper: Fixture.shopper))
        events.publish(.cartChanged(.empty, shopper: Fixture.otherShopper))
        events.publish(.productChanged(Fixture.product(8, price: 900)))
        let repriced = Fixture.product(2, price: 700)
        events.publish(.productChanged(repriced))
        await events.settled()
        #expect(recommendations.recommendations.calls.count == 1)
        var expected = loaded
        expected.recommended = section([repriced, suggested[1]], ProductSummary.init)
        expected.trending.items[1].product = ProductSummary(repriced)
        #expect(viewModel.state == expected)

        // A product moves into a category the shopper ordered from.
        let gate = Gate()
        let moved = Fixture.product(8, price: 900, category: "garden")
        recommendations.recommendations.handle { [suggested] _ in await gate.wait(); return [moved, suggested[1]] }
        events.publish(.productChanged(moved))
        events.publish(.productMoved(productId: moved.id, from: "books", to: "garden"))
        #expect(viewModel.state.recommended == expected.recommended)  // still loaded while it reloads
        await settle { gate.waiting == 1 }
        gate.open()
        await events.settled()
        expected.recommended = section([moved, suggested[1]], ProductSummary.init)
        #expect(viewModel.state.recommended == expected.recommended)

        // A product comes back in stock.
        let restocked = Fixture.product(9, stock: 2)
        recommendations.recommendations.returns([moved, restocked])
        events.publish(.productChanged(restocked))
        events.publish(.productRestocked(productId: restocked.id))
        await events.settled()
        expected.recommended = section([moved, restocked], ProductSummary.init)
        #expect(viewModel.state.recommended == expected.recommended)
        #expect(recommendations.recommendations.calls.count == 3)
    }

    @Test func viewsAndAddsElsewhereDoNotReloadTrending() async {
        let viewModel = await appeared()
        events.publish(.cartChanged(.empty, shopper: Fixture.otherShopper))
        events.publish(.favoriteChanged(productId: "p-0001", isFavorite: true, shopper: Fixture.shopper))
        await events.settled()
        #expect(analytics.trending.calls.count == 1)
        #expect(viewModel.state.trending == loaded.trending)
    }
}
