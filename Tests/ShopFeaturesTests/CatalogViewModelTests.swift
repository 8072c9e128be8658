import Clocks
import Shop
import TestWaits
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
            hasMore: products.count < (total ?? products.count), selection: [], loadMorePhase: .idle, loadMoreError: nil)
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
        #expect(await empty.refresh() == .completed)
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
        // The list shown is the one it had: its results, and the text they are for.
        #expect(viewModel.state == loaded([first]))
        #expect(catalog.page.calls.count == 1)
        #expect(events.subscriberCount == 0)
    }

    @Test func cancellingTheCallerCancelsTheSearch() async {
        let viewModel = await appeared(with: [first])
        let search = Task { await viewModel.search("x") }
        await settleUntilSleeping(clock)
        // Loading from the first keystroke: the products shown are not yet the results of "x".
        var searching = loaded([first])
        searching.query = "x"
        searching.phase = .loading
        #expect(viewModel.state == searching)
        search.cancel()
        #expect(await search.value == .cancelled)
        await clock.run()
        #expect(catalog.page.calls.count == 1)
        #expect(viewModel.state == loaded([first]))
    }

    @Test func choosingACategoryReloadsAndAnUnknownOneIsRefused() async throws {
        let viewModel = await appeared(with: [first, second])
        let before = viewModel.state

        let error = await #expect(throws: ShopError.self) { try await viewModel.setCategory("toys") }
        #expect(error?.reason == "categoryNotFound")
        #expect(viewModel.state == before)

        catalog.page.returns(ProductPage(products: [second], totalCount: 1))
        #expect(try await viewModel.setCategory("garden") == .completed)
        #expect(await viewModel.setSort(.price) == .completed)
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

        #expect(await viewModel.loadMore() == .completed)

        #expect(viewModel.state == loaded([first, second]))
        #expect(catalog.page.calls.last == ProductQuery(offset: 1, limit: 20))
        _ = await viewModel.loadMore()  // nothing more: no call
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
        #expect(await refresh.value == .cancelled)

        #expect(viewModel.state == loaded([first], total: 2))
        catalog.page.returns(ProductPage(products: [second], totalCount: 2))
        _ = await viewModel.loadMore()
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
        #expect(viewModel.state == loaded([first, second]))
        #expect(catalog.page.calls.last?.searchText == "")
    }

    @Test func deletingTheSelectionClearsItAndReloads() async throws {
        let viewModel = await appeared(with: [first, second])
        try viewModel.toggleSelection(second.id)
        try viewModel.toggleSelection(first.id)
        #expect(viewModel.state.selection == [first.id, second.id])
        let refused = #expect(throws: ShopError.self) { try viewModel.toggleSelection("p-9999") }
        #expect(refused?.reason == "notListed")
        #expect(refused?.message.contains("not in the loaded list") == true)

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

    @Test func productsDeletedElsewhereLeaveTheListAtOnceAndItRefillsToItsLength() async {
        let page = (1...20).map { Fixture.product($0) }
        let viewModel = await appeared(with: page, total: 25)
        viewModel.selectAll()
        let gate = Gate()
        let refilled = Array(page.dropFirst(2)) + [Fixture.product(21), Fixture.product(22)]
        catalog.page.handle { _ in
            await gate.wait()
            return ProductPage(products: refilled, totalCount: 23)
        }
        events.publish(.productsDeleted([page[0].id, page[1].id]))
        var expected = loaded(Array(page.dropFirst(2)), total: 23)
        expected.selection = page.dropFirst(2).map(\.id).sorted()
        #expect(viewModel.state == expected)

        // As many as the user asked to see (a page), as the catalog that deleted them shows.
        await settle { gate.waiting == 1 }
        #expect(catalog.page.calls.last == ProductQuery(limit: 20))
        gate.open()
        await settle { viewModel.products.count == 20 }
        expected = loaded(refilled, total: 23)
        expected.selection = page.dropFirst(2).map(\.id).sorted()
        #expect(viewModel.state == expected)
    }

    @Test func aListIntentReplacedByAnotherSaysItWasSuperseded() async throws {
        let viewModel = await appeared(with: [first, second])
        let gate = Gate()
        catalog.page.handle { [second] _ in
            await gate.wait()
            return ProductPage(products: [second], totalCount: 1)
        }
        let category = Task { try await viewModel.setCategory("garden") }
        await settle { gate.waiting == 1 }
        let sort = Task { await viewModel.setSort(.price) }
        await settle { gate.waiting == 2 }
        gate.open()
        #expect(try await category.value == .superseded)
        #expect(await sort.value == .completed)
        var expected = loaded([second])
        expected.category = "garden"
        expected.sort = .price
        #expect(viewModel.state == expected)
    }

    @Test func aFailedPageShowsInItsOwnPhaseAndLoadingMoreAgainRetries() async {
        let viewModel = await appeared(with: [first], total: 2)
        catalog.page.fails(Fixture.unavailable)
        #expect(await viewModel.loadMore() == .completed)
        var expected = loaded([first], total: 2)
        expected.loadMorePhase = .failed
        expected.loadMoreError = ErrorInfo(message: Fixture.unavailable.message, retryable: true)
        #expect(viewModel.state == expected)

        catalog.page.returns(ProductPage(products: [second], totalCount: 2))
        #expect(await viewModel.loadMore() == .completed)
        #expect(viewModel.state == loaded([first, second]))
    }

    @Test func aPageReplacedByANewListSaysItWasSuperseded() async {
        let viewModel = await appeared(with: [first], total: 2)
        let gate = Gate()
        catalog.page.handle { [second] _ in
            await gate.wait()
            return ProductPage(products: [second], totalCount: 2)
        }
        let more = Task { await viewModel.loadMore() }
        await settle { gate.waiting == 1 }
        let refresh = Task { await viewModel.refresh() }
        await settle { gate.waiting == 2 }
        gate.open()
        #expect(await more.value == .superseded)
        #expect(await refresh.value == .completed)
        #expect(viewModel.state.loadMorePhase == .idle)
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

    @Test func anUnlistedProductRenamedIntoTheLoadedPagesReloadsThemAndOneSortingAfterThemDoesNot() async {
        let viewModel = await appeared(with: [first, second], total: 4)
        var unlisted = Fixture.product(9)
        unlisted.price = Money(minorUnits: 1)  // a change of an unlisted product that sorts after the pages
        events.publish(.productChanged(unlisted))
        await events.settled()
        #expect(catalog.page.calls.count == 1)

        var renamed = unlisted
        renamed.name = "an atlas"  // sorts first, as SQLite's NOCASE does ("P" folded to "p" > "a")
        catalog.page.returns(ProductPage(products: [renamed, first], totalCount: 4))
        events.publish(.productChanged(renamed))
        await settle { viewModel.products.first == renamed }
        #expect(catalog.page.calls.count == 2)
    }

    @Test func anUnlistedProductRepricedIntoAListByPriceReloadsIt() async {
        let cheap = Fixture.product(1, price: 100), dear = Fixture.product(2, price: 200)
        let viewModel = await appeared(with: [cheap, dear], total: 3)
        catalog.page.returns(ProductPage(products: [cheap, dear], totalCount: 3))
        #expect(await viewModel.setSort(.price) == .completed)
        #expect(catalog.page.calls.count == 2)
        var unlisted = Fixture.product(3, price: 300)
        events.publish(.productChanged(unlisted))  // still after the last listed
        await events.settled()
        #expect(catalog.page.calls.count == 2)
        unlisted.price = Money(minorUnits: 150)
        catalog.page.returns(ProductPage(products: [cheap, unlisted], totalCount: 3))
        events.publish(.productChanged(unlisted))
        await settle { viewModel.products.last == unlisted }
        #expect(catalog.page.calls.count == 3)
    }

    @Test func anUnlistedProductChangedWhileANewSortLoadsIsCheckedAgainstTheNewList() async throws {
        // By name: "Product 1" (5.00), "Product 2" (1.00); by price: "Product 2", "Product 1".
        let dear = Fixture.product(1, price: 500), cheap = Fixture.product(2, price: 100)
        let viewModel = await appeared(with: [dear, cheap], total: 3)
        let gate = Gate()
        catalog.page.handle { [cheap, dear] _ in
            await gate.wait()
            return ProductPage(products: [cheap, dear], totalCount: 3)  // read before the change below
        }
        let sorting = Task { await viewModel.setSort(.price) }
        await settle { gate.waiting == 1 }
        // Repriced between the two: after the last of the list shown while the sort loads (1.00), before
        // the last of the new one (5.00).
        let repriced = Fixture.product(3, price: 300)
        events.publish(.productChanged(repriced))
        catalog.page.returns(ProductPage(products: [cheap, repriced], totalCount: 3))
        gate.open()
        #expect(await sorting.value == .completed)
        await events.settled()
        await settle { viewModel.products == [cheap, repriced] }
        #expect(catalog.page.calls.count == 3)  // the first page, the sort's, the reload the change asked for
    }

    @Test func anUnlistedProductChangedAfterTheLoadedPagesDuringALoadCausesNoReload() async throws {
        let viewModel = await appeared(with: [first, second], total: 3)
        let gate = Gate()
        catalog.page.handle { [first, second] _ in
            await gate.wait()
            return ProductPage(products: [first, second], totalCount: 3)
        }
        let refreshing = Task { await viewModel.refresh() }
        await settle { gate.waiting == 1 }
        var unlisted = Fixture.product(9)
        unlisted.price = Money(minorUnits: 1)  // still sorts after "Product 2" by name
        events.publish(.productChanged(unlisted))
        gate.open()
        #expect(await refreshing.value == .completed)
        await events.settled()
        #expect(catalog.page.calls.count == 2)
    }

    @Test func aChangeDuringARunningLoadReloadsOnceItEndsAndTheFeedSettlesAfter() async {
        let viewModel = await appeared(with: [first])
        let gate = Gate()
        catalog.page.handle { [first] _ in
            await gate.wait()
            return ProductPage(products: [first], totalCount: 1)  // read before the product was created
        }
        let refresh = Task { await viewModel.refresh() }
        await settle { gate.waiting == 1 }
        events.publish(.productCreated(second))
        let settled = Task { await events.settled(); return viewModel.products.count }
        catalog.page.returns(ProductPage(products: [first, second], totalCount: 2))
        gate.open()
        #expect(await refresh.value == .completed)
        // The feed settles only once the reload that includes the new product has shown it.
        #expect(await settled.value == 2)
        #expect(viewModel.state == loaded([first, second]))
    }
}
