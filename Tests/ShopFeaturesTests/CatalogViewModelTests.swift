import Clocks
import Shop
import Testing
@testable import ShopFeatures

@Suite @MainActor struct CatalogViewModelTests {
    let catalog = CatalogServiceDouble()
    let events = ShopEvents()
    let clock = TestClock<Duration>()
    let first = Fixture.product(1)
    let second = Fixture.product(2, category: "garden")

    func makeViewModel() -> CatalogViewModel {
        catalog.categories.returns([Fixture.books, Fixture.garden])
        return CatalogViewModel(catalog: catalog, events: events, clock: clock)
    }

    func loaded(_ products: [Product], total: Int? = nil) -> CatalogState {
        CatalogState(
            phase: .loaded, error: nil, query: "", category: nil, sort: .name,
            products: products.map(ProductSummary.init), totalCount: total ?? products.count,
            hasMore: products.count < (total ?? products.count), selection: [], isLoadingMore: false)
    }

    /// Appears and waits for the first page.
    func appeared(with products: [Product], total: Int? = nil) async -> CatalogViewModel {
        catalog.page.returns(ProductPage(products: products, totalCount: total ?? products.count))
        let viewModel = makeViewModel()
        viewModel.appear()
        await settle { viewModel.phase == .loaded && catalog.categories.calls.count == 1 }
        return viewModel
    }

    @Test func appearingLoadsTheFirstPage() async {
        let gate = Gate()
        catalog.page.handle { [first, second] _ in
            await gate.wait()
            return ProductPage(products: [first, second], totalCount: 2)
        }
        let viewModel = makeViewModel()

        viewModel.appear()

        var expected = loaded([])
        expected.phase = .loading
        #expect(viewModel.state == expected)
        gate.open()
        await settle { viewModel.phase == .loaded }
        #expect(viewModel.state == loaded([first, second]))
        #expect(catalog.page.calls == [ProductQuery(limit: 20)])
    }

    @Test func anEmptyCatalogIsLoadedAndAFailedOneIsFailed() async {
        let empty = await appeared(with: [])
        #expect(empty.state == loaded([]))

        catalog.page.fails(Fixture.unavailable)
        await empty.refresh()
        var expected = loaded([])
        expected.phase = .failed
        expected.error = ErrorInfo(message: Fixture.unavailable.message, retryable: true)
        #expect(empty.state == expected)
    }

    @Test func searchWaitsForQuietAndTheLatestSearchWins() async {
        let viewModel = await appeared(with: [first, second])
        catalog.page.handle { [second] query in ProductPage(products: [second], totalCount: 1) }

        let stale = Task { await viewModel.search("gar") }
        await settle { viewModel.query == "gar" }
        await settleUntilSleeping(clock)
        await clock.advance(by: .milliseconds(200))
        let latest = Task { await viewModel.search("garden") }
        await settle { viewModel.query == "garden" }
        #expect(await stale.value == .superseded)

        await settleUntilSleeping(clock)
        await clock.advance(by: .milliseconds(299))
        #expect(catalog.page.calls.count == 1)
        await clock.advance(by: .milliseconds(1))
        #expect(await latest.value == .completed)

        #expect(catalog.page.calls.map(\.searchText) == ["", "garden"])
        var expected = loaded([second])
        expected.query = "garden"
        #expect(viewModel.state == expected)
    }

    @Test func closingCancelsAPendingSearchWithoutShowingAnError() async {
        let viewModel = await appeared(with: [first])
        let search = Task { await viewModel.search("x") }
        await settleUntilSleeping(clock)

        viewModel.close()

        #expect(await search.value == .cancelled)
        await clock.run()
        var expected = loaded([first])
        expected.query = "x"
        #expect(viewModel.state == expected)
        #expect(catalog.page.calls.count == 1)
        #expect(events.subscriberCount == 0)
    }

    @Test func cancellingTheCallerCancelsTheSearch() async {
        let viewModel = await appeared(with: [first])
        let search = Task { await viewModel.search("x") }
        await settleUntilSleeping(clock)
        search.cancel()
        #expect(await search.value == .cancelled)
        await clock.run()
        #expect(catalog.page.calls.count == 1)
    }

    @Test func choosingACategoryReloadsAndAnUnknownOneIsRefused() async throws {
        let viewModel = await appeared(with: [first, second])
        let before = viewModel.state

        let error = await #expect(throws: ShopError.self) { try await viewModel.setCategory("toys") }
        #expect(error?.reason == "categoryNotFound")
        #expect(viewModel.state == before)

        catalog.page.returns(ProductPage(products: [second], totalCount: 1))
        try await viewModel.setCategory("garden")
        await viewModel.setSort(.price)
        var expected = loaded([second])
        expected.category = "garden"
        expected.sort = .price
        #expect(viewModel.state == expected)
        #expect(catalog.page.calls.last == ProductQuery(categoryId: "garden", sort: .price, limit: 20))
    }

    @Test func loadingMoreAppendsTheNextPage() async {
        let viewModel = await appeared(with: [first], total: 2)
        #expect(viewModel.state.hasMore)
        catalog.page.returns(ProductPage(products: [second], totalCount: 2))

        await viewModel.loadMore()

        #expect(viewModel.state == loaded([first, second]))
        #expect(catalog.page.calls.last == ProductQuery(offset: 1, limit: 20))
        await viewModel.loadMore()  // nothing more: no call
        #expect(catalog.page.calls.count == 2)
    }

    @Test func cancellingARefreshShowsThePhaseItReplacedAndLoadingMoreWorksAgain() async {
        let viewModel = await appeared(with: [first], total: 2)
        let gate = Gate()
        catalog.page.handle { [first] _ in
            await gate.wait()
            return ProductPage(products: [first], totalCount: 2)
        }
        let refresh = Task { await viewModel.refresh() }
        await settle { viewModel.phase == .loading }

        refresh.cancel()
        gate.open()
        await refresh.value

        #expect(viewModel.state == loaded([first], total: 2))
        catalog.page.returns(ProductPage(products: [second], totalCount: 2))
        await viewModel.loadMore()
        #expect(viewModel.state == loaded([first, second]))
    }

    @Test func aSearchCancelledWhileWaitingForQuietLetsTheFeedReloadTheList() async {
        let viewModel = await appeared(with: [first])
        let search = Task { await viewModel.search("x") }
        await settleUntilSleeping(clock)
        search.cancel()
        #expect(await search.value == .cancelled)

        catalog.page.returns(ProductPage(products: [first, second], totalCount: 2))
        events.publish(.productCreated(second))
        await settle { viewModel.products.count == 2 }
        var expected = loaded([first, second])
        expected.query = "x"
        #expect(viewModel.state == expected)
    }

    @Test func deletingTheSelectionClearsItAndReloads() async throws {
        let viewModel = await appeared(with: [first, second])
        try viewModel.toggleSelection(second.id)
        try viewModel.toggleSelection(first.id)
        #expect(viewModel.state.selection == [first.id, second.id])
        let refused = #expect(throws: ShopError.self) { try viewModel.toggleSelection("p-9999") }
        #expect(refused?.reason == "productNotFound")

        catalog.delete.handle { [events] ids in await events.publish(.productsDeleted(ids)) }
        catalog.page.returns(ProductPage(products: [], totalCount: 0))
        try await viewModel.deleteSelected()

        #expect(catalog.delete.calls == [[first.id, second.id]])
        #expect(viewModel.state == loaded([]))
        let nothing = await #expect(throws: ShopError.self) { try await viewModel.deleteSelected() }
        #expect(nothing?.reason == "nothingSelected")
    }

    @Test func selectAllAndClear() async {
        let viewModel = await appeared(with: [first, second])
        viewModel.selectAll()
        #expect(viewModel.state.selection == [first.id, second.id])
        viewModel.clearSelection()
        #expect(viewModel.state == loaded([first, second]))
    }

    @Test func productsDeletedElsewhereLeaveTheListAtOnce() async {
        let viewModel = await appeared(with: [first, second])
        viewModel.selectAll()
        events.publish(.productsDeleted([first.id]))
        var expected = loaded([second])
        expected.selection = [second.id]
        #expect(viewModel.state == expected)
    }

    @Test func aCreatedProductReloadsTheListWithoutShowingLoading() async {
        let viewModel = await appeared(with: [first])
        let gate = Gate()
        catalog.page.handle { [first, second] _ in
            await gate.wait()
            return ProductPage(products: [first, second], totalCount: 2)
        }
        events.publish(.productCreated(second))
        await settle { gate.waiting == 1 }
        #expect(viewModel.state == loaded([first]))
        gate.open()
        await settle { viewModel.products.count == 2 }
        #expect(viewModel.state == loaded([first, second]))
    }
}
