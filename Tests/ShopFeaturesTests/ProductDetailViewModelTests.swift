import Clocks
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

@Suite @MainActor struct ProductDetailViewModelTests {
    let catalog = CatalogServiceDouble()
    let favorites = FavoritesServiceDouble()
    let cart = CartServiceDouble()
    let analytics = AnalyticsServiceDouble()
    let events = ShopEvents()
    let clock = TestClock<Duration>()
    let product = Fixture.product(7, price: 1_250, stock: 4, maxPerOrder: 3)

    init() {
        cart.cart.returns(.empty)
    }

    func makeViewModel(_ id: String? = nil) -> ProductDetailViewModel {
        ProductDetailViewModel(productId: id ?? product.id, catalog: catalog, favorites: favorites, cart: cart,
                               analytics: analytics, events: events, session: .signedInForTests(events: events), clock: clock)
    }

    func loaded(quantity: Int = 1, isFavorite: Bool? = false, inCart: Int = 0) -> ProductDetailState {
        ProductDetailState(
            phase: .loaded, error: nil, product: ProductInfo(product), isFavorite: isFavorite,
            canToggleFavorite: isFavorite != nil, inCart: inCart, quantity: quantity, maxQuantity: 3 - inCart,
            totalPrice: product.price * quantity, canAddToCart: inCart < 3, isOutOfStock: false,
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
        cart.cart.handle { _ in await gate.wait(); return .empty }
        let viewModel = makeViewModel()

        viewModel.appear()

        #expect(viewModel.state == ProductDetailState(
            phase: .loading, error: nil, product: nil, isFavorite: nil, canToggleFavorite: false, inCart: nil,
            quantity: 1, maxQuantity: 0, totalPrice: nil, canAddToCart: false, isOutOfStock: false,
            isAddingToCart: false, didAddToCart: false))
        await settle { gate.waiting == 3 }  // the three calls are running at once
        gate.open()
        await settle { viewModel.phase == .loaded }
        #expect(viewModel.state == loaded(isFavorite: true))
    }

    @Test func aChangeThatCameDuringARefreshItsCallerAbandonedIsShown() async throws {
        let viewModel = await appeared()
        let gate = Gate()
        let stored = Locked(product)
        catalog.product.handle { _ in
            await gate.wait()
            return stored.withLock { $0 }
        }
        let refresh = Task { await viewModel.refresh() }
        await settle { gate.waiting == 1 }
        var repriced = product
        repriced.price = Money(minorUnits: 990)
        stored.withLock { $0 = repriced }
        events.publish(.productChanged(repriced))  // the refresh may have read before it
        refresh.cancel()
        gate.open()
        #expect(await refresh.value == .cancelled)
        await events.settled()
        await settle { viewModel.product?.price == repriced.price }
        #expect(viewModel.phase == .loaded)
    }

    @Test func aCartChangeThatCameDuringTheLoadIsNotHiddenByWhatTheLoadRead() async throws {
        let viewModel = await appeared()
        let gate = Gate()
        let stored = Locked(Cart.empty)
        cart.cart.handle { _ in
            await gate.wait()
            return Cart.empty  // read before the change below
        }
        let refresh = Task { await viewModel.refresh() }
        await settle { gate.waiting == 1 }
        let added = Cart(lines: [Fixture.line(product, quantity: 2)], tax: .zero, revision: 2)
        stored.withLock { $0 = added }
        events.publish(.cartChanged(added, shopper: Fixture.shopper))
        cart.cart.handle { _ in stored.withLock { $0 } }
        gate.open()
        #expect(await refresh.value == .completed)
        await events.settled()
        await settle { viewModel.inCart == 2 }
        #expect(viewModel.inCart == 2)
    }

    @Test func aChangeStoredWhileTheLoadReadsShowsAfterIt() async throws {
        let gate = Gate()
        let stored = Locked(product)
        catalog.product.handle { _ in
            let value = stored.withLock { $0 }
            await gate.wait()
            return value
        }
        favorites.isFavorite.returns(false)
        let viewModel = makeViewModel()
        viewModel.appear()
        await settle { gate.waiting == 1 }

        var changed = product
        changed.price = Money(minorUnits: 990)
        stored.withLock { $0 = changed }
        events.publish(.productChanged(changed))
        gate.open()
        await events.settled()
        #expect(viewModel.phase == .loaded)
        #expect(viewModel.product == changed)
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
        var saving = loaded(isFavorite: true)
        saving.canToggleFavorite = false
        #expect(viewModel.state == saving)
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
        events.publish(.favoriteChanged(productId: "p-other", isFavorite: true, shopper: Fixture.shopper))
        #expect(viewModel.state == loaded())
        events.publish(.favoriteChanged(productId: product.id, isFavorite: true, shopper: Fixture.shopper))
        #expect(viewModel.state == loaded(isFavorite: true))
        events.publish(.productsDeleted([product.id]))
        #expect(viewModel.state.phase == .failed)
        #expect(viewModel.state.product == nil)
    }

    /// The page reports each change of what its state shows (the binding sends its state on these reports),
    /// and none for a feed event that leaves it as it was: the cart's events come on every cart change.
    @Test func reportsEachChangeOfItsStateAndNoneForAnEventThatLeavesItAsItWas() async throws {
        let viewModel = await appeared()
        var reports = 0
        viewModel.stateDidChange = { reports += 1 }
        let other = Fixture.product(8)
        events.publish(.cartChanged(Cart(lines: [Fixture.line(other, quantity: 2)], tax: .zero, revision: 2), shopper: Fixture.shopper))
        events.publish(.favoriteChanged(productId: product.id, isFavorite: false, shopper: Fixture.shopper))
        #expect(reports == 0)
        #expect(viewModel.state == loaded())

        events.publish(.cartChanged(Cart(lines: [Fixture.line(product, quantity: 2)], tax: .zero, revision: 3), shopper: Fixture.shopper))
        #expect(reports > 0)
        #expect(viewModel.state == loaded(inCart: 2))
        reports = 0
        #expect(throws: ShopError.self) { try viewModel.incrementQuantity() }  // at most 3 - 2 = 1: refused
        #expect(reports == 0)
        events.publish(.cartChanged(Cart(lines: [], tax: .zero, revision: 4), shopper: Fixture.shopper))
        try viewModel.incrementQuantity()
        #expect(reports == 2)  // the units in the cart, then the quantity
        #expect(viewModel.state == loaded(quantity: 2))
    }

    /// A reload after the feed says the shopper's data changed: the error shown is that of a part unknown now,
    /// not a part that failed before and is known again.
    @Test func aReloadShowsTheErrorOfThePartStillUnknown() async {
        let viewModel = await appeared()
        favorites.isFavorite.fails(ShopError.serviceUnavailable("favorites"))
        events.publish(.shopperDataChanged(Fixture.shopper))
        await events.settled()
        #expect(viewModel.isFavorite == nil && viewModel.state.error?.message.contains("favorites") == true)
        favorites.isFavorite.returns(true)
        cart.cart.fails(ShopError.serviceUnavailable("cart"))
        events.publish(.shopperDataChanged(Fixture.shopper))
        await events.settled()
        #expect(viewModel.isFavorite == true && viewModel.inCart == nil)
        #expect(viewModel.state.error?.message.contains("cart") == true, "\(String(describing: viewModel.state.error))")
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
        #expect(events.subscriberCount == 1)  // the session's own, not the ViewModel's
    }

    @Test func aFavouritesOutageShowsTheProductWithItsMarkUnknown() async throws {
        catalog.product.returns(product)
        favorites.isFavorite.fails(ShopError.serviceUnavailable("favorites"))
        let viewModel = makeViewModel()
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        var expected = loaded(isFavorite: nil)
        expected.error = ErrorInfo(message: ShopError.serviceUnavailable("favorites").message, retryable: true)
        #expect(viewModel.state == expected)

        let toggle = await #expect(throws: ShopError.self) { try await viewModel.toggleFavorite() }
        #expect(toggle?.reason == "loadFailed")
        #expect(toggle?.details["content"] == "favorites")
        #expect(favorites.setFavorite.calls.isEmpty)
        try viewModel.incrementQuantity()  // the rest of the page works
        // A successful add does not hide why the favourite mark is unknown.
        cart.add.returns(.empty)
        try await viewModel.addToCart()
        #expect(viewModel.state.error == expected.error)
        #expect(viewModel.state.isFavorite == nil)

        favorites.isFavorite.returns(true)
        #expect(await viewModel.refresh() == .completed)
        var known = loaded(quantity: 2, isFavorite: true)
        known.didAddToCart = true
        #expect(viewModel.state == known)
    }

    @Test func aCartOutageShowsTheProductWithItsUnitsInTheCartUnknownAndSaysWhy() async {
        catalog.product.returns(product)
        favorites.isFavorite.returns(false)
        cart.cart.fails(ShopError.serviceUnavailable("cart"))
        let viewModel = makeViewModel()
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        #expect(viewModel.state.inCart == nil)
        #expect(viewModel.state.error == ErrorInfo(message: ShopError.serviceUnavailable("cart").message, retryable: true))
        // The cart changes elsewhere: its units are known again, and so is the reason gone.
        events.publish(.cartChanged(Cart(lines: [], tax: .zero, revision: 5), shopper: Fixture.shopper))
        #expect(viewModel.state == loaded())
    }

    @Test func actionsOnAFailedPageSayWhatIsTrue() async throws {
        // A product that never existed.
        catalog.product.fails(ShopError.productNotFound("p-9999"))
        favorites.isFavorite.returns(false)
        let missing = makeViewModel("p-9999")
        missing.appear()
        await settle { missing.phase != .loading }
        let never = #expect(throws: ShopError.self) { try missing.incrementQuantity() }
        #expect(never?.reason == "productNotFound")
        #expect(never?.message == "Product p-9999 does not exist.")

        // A load that failed: retryable, and refresh retries.
        catalog.product.fails(Fixture.unavailable)
        let failed = makeViewModel()
        failed.appear()
        await settle { failed.phase != .loading }
        let retry = await #expect(throws: ShopError.self) { try await failed.addToCart() }
        #expect(retry?.reason == "loadFailed")
        #expect(retry?.isRetryable == true)
        #expect(retry?.message.hasSuffix("Refresh to try again.") == true)
        catalog.product.returns(product)
        #expect(await failed.refresh() == .completed)
        #expect(failed.state == loaded())

        // A product deleted while shown.
        events.publish(.productsDeleted([product.id]))
        let gone = #expect(throws: ShopError.self) { try failed.decrementQuantity() }
        #expect(gone?.reason == "productNotFound")
        #expect(gone?.message == "Product \(product.id) is no longer available.")
        for message in [never?.message, retry?.message, gone?.message] {
            #expect(message?.contains("Still loading") == false)
        }
    }

    /// What a fresh open of a product that no longer exists shows, with the message of a page that saw it
    /// go (a fresh open says the product does not exist; one that was showing it says it left).
    func goneAsAFreshOpenShowsIt() async -> ProductDetailState {
        catalog.product.fails(ShopError.productNotFound(product.id))
        let fresh = makeViewModel()
        fresh.appear()
        await settle { fresh.phase != .loading }
        fresh.close()
        var state = fresh.state
        state.error = ErrorInfo(message: "This product is no longer available.", retryable: false)
        return state
    }

    /// A deleted product's page shows what a fresh open shows (no product, favourite mark, units in the cart,
    /// a quantity of 1), also after the cart's change that took the product's line out, which follows the
    /// deletion, and after later favourite and cart changes of the shopper.
    @Test func aDeletedProductsPageShowsWhatAFreshOpenShowsWhateverComesAfter() async throws {
        cart.cart.returns(Cart(lines: [Fixture.line(product, quantity: 1)], tax: .zero, revision: 1))
        let viewModel = await appeared(isFavorite: true)
        try viewModel.incrementQuantity()
        #expect(viewModel.state == loaded(quantity: 2, isFavorite: true, inCart: 1))

        events.publish(.productsDeleted([product.id]))
        events.publish(.cartChanged(Cart(lines: [], tax: .zero, revision: 2), shopper: Fixture.shopper))
        events.publish(.favoriteChanged(productId: product.id, isFavorite: false, shopper: Fixture.shopper))
        events.publish(.cartChanged(Cart(lines: [Fixture.line(product, quantity: 1)], tax: .zero, revision: 3), shopper: Fixture.shopper))
        await events.settled()

        #expect(viewModel.state == (await goneAsAFreshOpenShowsIt()))
    }

    /// A page whose product does not exist shows none of the shopper's parts, whatever the feed says of
    /// them, as a fresh open of it does; also when a refresh found the product gone after the feed spoke.
    @Test func aPageWithoutItsProductShowsNoneOfTheShoppersPartsOfIt() async throws {
        catalog.product.fails(ShopError.productNotFound(product.id))
        favorites.isFavorite.returns(true)
        let viewModel = makeViewModel()
        viewModel.appear()
        await settle { viewModel.phase != .loading }
        let opened = viewModel.state
        #expect(opened.inCart == nil && opened.isFavorite == nil)

        events.publish(.cartChanged(Cart(lines: [Fixture.line(product, quantity: 2)], tax: .zero, revision: 2), shopper: Fixture.shopper))
        events.publish(.favoriteChanged(productId: product.id, isFavorite: true, shopper: Fixture.shopper))
        #expect(viewModel.state == opened)

        // A refresh that finds it gone, with the cart and the mark changing while it reads.
        let gate = Gate()
        catalog.product.handle { [product] _ in await gate.wait(); throw ShopError.productNotFound(product.id) }
        let refresh = Task { await viewModel.refresh() }
        await settle { gate.waiting == 1 }
        events.publish(.cartChanged(Cart(lines: [Fixture.line(product, quantity: 1)], tax: .zero, revision: 3), shopper: Fixture.shopper))
        events.publish(.favoriteChanged(productId: product.id, isFavorite: false, shopper: Fixture.shopper))
        gate.open()
        #expect(await refresh.value == .completed)
        await events.settled()
        #expect(viewModel.state == opened)
    }

    @Test func canAddToCartCountsWhatTheCartHolds() async throws {
        // maxPerOrder 3, stock 4: with 3 in the cart, nothing more can be added.
        cart.cart.returns(Cart(lines: [Fixture.line(product, quantity: 3)], tax: .zero, revision: 1))
        let viewModel = await appeared()
        #expect(viewModel.state == loaded(inCart: 3))
        #expect(!viewModel.state.canAddToCart)
        let high = #expect(throws: ShopError.self) { try viewModel.incrementQuantity() }
        #expect(high?.reason == "quantityExceedsMaximum")
        #expect(high?.details["requested"] == "5")

        // The cart changes elsewhere: one left.
        events.publish(.cartChanged(Cart(lines: [Fixture.line(product, quantity: 1)], tax: .zero, revision: 2), shopper: Fixture.shopper))
        #expect(viewModel.state == loaded(inCart: 1))
        try viewModel.incrementQuantity()
        #expect(viewModel.state == loaded(quantity: 2, inCart: 1))
        events.publish(.cartChanged(Cart(lines: [Fixture.line(product, quantity: 2)], tax: .zero, revision: 3), shopper: Fixture.shopper))
        #expect(viewModel.state == loaded(quantity: 1, inCart: 2))
    }
}
