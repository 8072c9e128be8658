import Clocks
import Observation
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

/// A product page's reports (``ProductDetailViewModel/stateDidChange``) along every path that
/// changes it. A binding reads the state at a report (later, once); so at every quiet point the state must
/// equal the state read at the last report, and Observation's tracking of `state` must not have seen a change
/// that no report followed.
@Suite @MainActor struct ProductDetailReportTests {
    let catalog = CatalogServiceDouble()
    let favorites = FavoritesServiceDouble()
    let cart = CartServiceDouble()
    let analytics = AnalyticsServiceDouble()
    let accounts = AccountServiceDouble()
    let events = ShopEvents()
    let clock = TestClock<Duration>()
    let product = Fixture.product(7, price: 1_250, stock: 4, maxPerOrder: 3)

    /// Watches one ViewModel.
    @MainActor final class Audit {
        final class Flag: @unchecked Sendable { var observed = false }
        let viewModel: ProductDetailViewModel
        var atLastReport: ProductDetailState
        var reports = 0
        let flag = Flag()
        var failures: [String] = []

        init(_ viewModel: ProductDetailViewModel) {
            self.viewModel = viewModel
            atLastReport = viewModel.state
            viewModel.stateDidChange = { [unowned self] in
                reports += 1
                atLastReport = viewModel.state
            }
            arm()
        }

        func arm() {
            flag.observed = false
            withObservationTracking({ _ = viewModel.state }, onChange: { [flag] in flag.observed = true })
        }

        /// At a quiet point: every change was reported.
        func check(_ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let now = viewModel.state
            if now != atLastReport {
                Issue.record("\(label): state changed without a report:\n  reported \(atLastReport)\n  now      \(now)", sourceLocation: sourceLocation)
            }
            if flag.observed && reports == 0 {
                Issue.record("\(label): Observation saw a change, no report", sourceLocation: sourceLocation)
            }
            reports = 0
            arm()
        }
    }

    func makeViewModel(session: ShopSession) -> ProductDetailViewModel {
        ProductDetailViewModel(productId: product.id, catalog: catalog, favorites: favorites, cart: cart,
                               analytics: analytics, events: events, session: session, clock: clock)
    }

    @Test func everyPathReportsItsChanges() async throws {
        catalog.product.returns(product)
        favorites.isFavorite.returns(false)
        cart.cart.returns(.empty)
        accounts.activeAccount.returns(Fixture.account)
        let session = ShopSession.signedInForTests(events: events, accounts: accounts)
        let viewModel = makeViewModel(session: session)
        let audit = Audit(viewModel)
        viewModel.appear()
        audit.check("appear")
        await settle { viewModel.phase == .loaded }
        audit.check("loaded")

        // Quantity.
        try viewModel.incrementQuantity()
        audit.check("increment")
        try viewModel.decrementQuantity()
        audit.check("decrement")

        // Feed: cart, favourite, product, order, resync, shopper data, deletion comes last.
        events.publish(.cartChanged(Cart(lines: [Fixture.line(product, quantity: 2)], tax: .zero, revision: 2), shopper: Fixture.shopper))
        audit.check("cart event")
        events.publish(.favoriteChanged(productId: product.id, isFavorite: true, shopper: Fixture.shopper))
        audit.check("favourite event")
        var repriced = product
        repriced.price = Money(minorUnits: 990)
        repriced.stock = 1
        events.publish(.productChanged(repriced))
        audit.check("product event")
        catalog.product.returns(product)
        events.publish(.orderPlaced(Fixture.order(1, lines: [Fixture.line(product, quantity: 1)]), shopper: Fixture.shopper))
        await events.settled()
        audit.check("order event")
        favorites.isFavorite.fails(ShopError.serviceUnavailable("favorites"))
        events.publish(.resync)
        await events.settled()
        audit.check("resync with favourites out")
        favorites.isFavorite.returns(true)
        cart.cart.fails(ShopError.serviceUnavailable("cart"))
        events.publish(.shopperDataChanged(Fixture.shopper))
        await events.settled()
        audit.check("shopper data, cart out")
        // The cart known again from its event: the units, then the part's error cleared (the last change).
        events.publish(.cartChanged(Cart(lines: [Fixture.line(product, quantity: 1)], tax: .zero, revision: 3), shopper: Fixture.shopper))
        audit.check("cart event clears the part error")
        #expect(viewModel.state.error == nil)
        // The favourite mark unknown, then known from its event: the mark, then the part's error cleared.
        favorites.isFavorite.fails(ShopError.serviceUnavailable("favorites"))
        cart.cart.returns(.empty)
        events.publish(.resync)
        await events.settled()
        audit.check("resync with favourites out again")
        #expect(viewModel.state.isFavorite == nil && viewModel.state.error != nil)
        events.publish(.favoriteChanged(productId: product.id, isFavorite: false, shopper: Fixture.shopper))
        audit.check("favourite event clears the part error")
        #expect(viewModel.state.error == nil)
        favorites.isFavorite.returns(true)
        #expect(await viewModel.refresh() == .completed)
        audit.check("refresh")

        // Favourite: saved, failed (operational), refused.
        favorites.setFavorite.returns(())
        try await viewModel.toggleFavorite()
        audit.check("toggle saved")
        favorites.setFavorite.fails(ShopError.serviceUnavailable("favorites"))
        try await viewModel.toggleFavorite()
        audit.check("toggle failed")
        favorites.setFavorite.fails(ShopError.notReady)
        _ = try? await viewModel.toggleFavorite()
        audit.check("toggle refused")

        // Add to cart: stored (flag, then its timer), failed, refused.
        cart.add.returns(Cart(lines: [Fixture.line(product, quantity: 1)], tax: .zero, revision: 5))
        try await viewModel.addToCart()
        audit.check("added")
        await settleUntilSleeping(clock)
        await clock.advance(by: ProductDetailViewModel.addedFlagDuration)
        await settle { !viewModel.didAddToCart }
        audit.check("flag ended")
        cart.add.fails(ShopError.serviceUnavailable("cart"))
        try await viewModel.addToCart()
        audit.check("add failed")
        cart.add.fails(ShopError.quantityExceedsStock(product.id, name: product.name, requested: 9, available: 4))
        _ = try? await viewModel.addToCart()
        audit.check("add refused")

        // A load failing, and deletion.
        catalog.product.fails(Fixture.unavailable)
        #expect(await viewModel.refresh() == .completed)
        audit.check("load failed")
        catalog.product.returns(product)
        #expect(await viewModel.refresh() == .completed)
        audit.check("reloaded")
        events.publish(.productsDeleted([product.id]))
        audit.check("deleted")

        // Close while loading.
        let gate = Gate()
        catalog.product.handle { [product] _ in await gate.wait(); return product }
        let refresh = Task { await viewModel.refresh() }
        await settle { gate.waiting == 1 }
        audit.check("loading")
        viewModel.close()
        audit.check("closed")
        gate.open()
        _ = await refresh.value
        audit.check("after close")
    }

    @Test func aSessionSwitchReportsItsChanges() async throws {
        catalog.product.returns(product)
        favorites.isFavorite.returns(false)
        cart.cart.returns(.empty)
        let session = ShopSession(accounts: accounts, events: events, clock: TestClock(), makeGuestId: { "guest-1" })
        let viewModel = makeViewModel(session: session)
        let audit = Audit(viewModel)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        audit.check("loaded as guest")
        accounts.adoptGuest.returns(GuestAdoption(cart: Cart(lines: [Fixture.line(product, quantity: 2)], tax: .zero, revision: 1), capped: []))
        cart.cart.returns(Cart(lines: [Fixture.line(product, quantity: 2)], tax: .zero, revision: 1))
        favorites.isFavorite.returns(true)
        try await session.signIn(Fixture.signedIn)
        await events.settled()
        audit.check("signed in")
        #expect(viewModel.inCart == 2)
    }
}
