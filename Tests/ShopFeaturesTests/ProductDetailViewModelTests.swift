import Clocks
import Shop
import Testing
@testable import ShopFeatures

@Suite @MainActor struct ProductDetailViewModelTests {
    let catalog = CatalogServiceDouble()
    let favorites = FavoritesServiceDouble()
    let cart = CartServiceDouble()
    let events = ShopEvents()
    let clock = TestClock<Duration>()
    let product = Fixture.product(7, price: 1_250, stock: 4, maxPerOrder: 3)

    func makeViewModel(_ id: String? = nil) -> ProductDetailViewModel {
        ProductDetailViewModel(productId: id ?? product.id, catalog: catalog, favorites: favorites, cart: cart,
                               events: events, clock: clock)
    }

    func loaded(quantity: Int = 1, isFavorite: Bool = false) -> ProductDetailState {
        ProductDetailState(
            phase: .loaded, error: nil, product: ProductInfo(product), isFavorite: isFavorite, quantity: quantity,
            maxQuantity: 3, totalPrice: product.price * quantity, canAddToCart: true, isOutOfStock: false,
            isAddingToCart: false, didAddToCart: false)
    }

    func appeared(isFavorite: Bool = false) async -> ProductDetailViewModel {
        catalog.product.returns(product)
        favorites.isFavorite.returns(isFavorite)
        let viewModel = makeViewModel()
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        return viewModel
    }

    @Test func loadsTheProductAndItsFavouriteMarkInParallel() async {
        let gate = Gate()
        catalog.product.handle { [product] _ in await gate.wait(); return product }
        favorites.isFavorite.handle { _ in await gate.wait(); return true }
        let viewModel = makeViewModel()

        viewModel.appear()

        #expect(viewModel.state == ProductDetailState(
            phase: .loading, error: nil, product: nil, isFavorite: false, quantity: 1, maxQuantity: 0,
            totalPrice: nil, canAddToCart: false, isOutOfStock: false, isAddingToCart: false, didAddToCart: false))
        await settle { gate.waiting == 2 }  // both calls are running at once
        gate.open()
        await settle { viewModel.phase == .loaded }
        #expect(viewModel.state == loaded(isFavorite: true))
    }

    @Test func anUnknownProductFailsWithoutRetry() async {
        catalog.product.fails(ShopError.productNotFound("p-0404"))
        favorites.isFavorite.returns(false)
        let viewModel = makeViewModel("p-0404")
        viewModel.appear()
        await settle { viewModel.phase != .loading }
        #expect(viewModel.state.phase == .failed)
        #expect(viewModel.state.error == ErrorInfo(message: "Product p-0404 does not exist.", retryable: false))
    }

    @Test func quantityStaysWithinOneAndTheAvailableMaximum() async throws {
        let viewModel = await appeared()
        let low = #expect(throws: ShopError.self) { try viewModel.decrementQuantity() }
        #expect(low?.reason == "invalidQuantity")
        try viewModel.incrementQuantity()
        try viewModel.incrementQuantity()
        #expect(viewModel.state == loaded(quantity: 3))
        let high = #expect(throws: ShopError.self) { try viewModel.incrementQuantity() }
        #expect(high?.reason == "quantityExceedsMaximum")
        #expect(viewModel.state == loaded(quantity: 3))
        try viewModel.decrementQuantity()
        #expect(viewModel.state == loaded(quantity: 2))
    }

    @Test func togglingTheFavouriteIsOptimisticAndRevertsOnFailure() async throws {
        let viewModel = await appeared()
        let gate = Gate()
        favorites.setFavorite.handle { _ in
            await gate.wait()
            throw ShopError.serviceUnavailable("favorites")
        }

        let toggle = Task { try await viewModel.toggleFavorite() }
        await settle { gate.waiting == 1 }
        #expect(viewModel.state == loaded(isFavorite: true))
        let second = await #expect(throws: ShopError.self) { try await viewModel.toggleFavorite() }
        #expect(second?.reason == "alreadySubmitting")
        gate.open()
        try await toggle.value

        var expected = loaded(isFavorite: false)
        expected.error = ErrorInfo(message: ShopError.serviceUnavailable("favorites").message, retryable: true)
        #expect(viewModel.state == expected)
        #expect(favorites.setFavorite.calls == [.init(productId: product.id, isFavorite: true)])

        favorites.setFavorite.returns(())
        try await viewModel.toggleFavorite()
        #expect(viewModel.state == loaded(isFavorite: true))
    }

    @Test func addingToCartShowsProgressRefusesDoubleSubmissionAndFlagsSuccessForTwoSeconds() async throws {
        let viewModel = await appeared()
        try viewModel.incrementQuantity()
        let gate = Gate()
        cart.add.handle { _ in await gate.wait(); return .empty }

        let add = Task { try await viewModel.addToCart() }
        await settle { gate.waiting == 1 }
        var adding = loaded(quantity: 2)
        adding.isAddingToCart = true
        adding.canAddToCart = false
        #expect(viewModel.state == adding)
        let again = await #expect(throws: ShopError.self) { try await viewModel.addToCart() }
        #expect(again?.reason == "alreadySubmitting")
        #expect(viewModel.state == adding)

        gate.open()
        try await add.value
        var added = loaded(quantity: 2)
        added.didAddToCart = true
        #expect(viewModel.state == added)
        #expect(cart.add.calls == [.init(productId: product.id, quantity: 2)])

        await settleUntilSleeping(clock)
        await clock.advance(by: .milliseconds(1_999))
        #expect(viewModel.didAddToCart)
        await clock.advance(by: .milliseconds(1))
        await settle { !viewModel.didAddToCart }
        #expect(viewModel.state == loaded(quantity: 2))
    }

    @Test func aRefusedAddChangesNothing() async throws {
        let viewModel = await appeared()
        cart.add.fails(ShopError.quantityExceedsStock(product.id, name: product.name, requested: 5, available: 4))
        let error = await #expect(throws: ShopError.self) { try await viewModel.addToCart() }
        #expect(error?.reason == "quantityExceedsStock")
        #expect(viewModel.state == loaded())
    }

    @Test func anOutOfStockProductCannotBeAdded() async throws {
        let soldOut = Fixture.product(8, stock: 0)
        catalog.product.returns(soldOut)
        favorites.isFavorite.returns(false)
        let viewModel = makeViewModel(soldOut.id)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        #expect(viewModel.state.isOutOfStock)
        #expect(!viewModel.state.canAddToCart)
        #expect(viewModel.state.maxQuantity == 0)
        let error = await #expect(throws: ShopError.self) { try await viewModel.addToCart() }
        #expect(error?.reason == "outOfStock")
    }

    @Test func feedChangesApplyAtOnce() async {
        let viewModel = await appeared()
        events.publish(.favoriteChanged(productId: "p-other", isFavorite: true))
        #expect(viewModel.state == loaded())
        events.publish(.favoriteChanged(productId: product.id, isFavorite: true))
        #expect(viewModel.state == loaded(isFavorite: true))
        events.publish(.productsDeleted([product.id]))
        #expect(viewModel.state.phase == .failed)
        #expect(viewModel.state.product == nil)
    }

    @Test func closingCancelsTheLoadAndUnsubscribes() async {
        let gate = Gate()
        catalog.product.handle { [product] _ in await gate.wait(); return product }
        favorites.isFavorite.returns(false)
        let viewModel = makeViewModel()
        viewModel.appear()
        viewModel.close()
        gate.open()
        #expect(viewModel.state.phase == .idle)
        #expect(events.subscriberCount == 0)
    }
}
