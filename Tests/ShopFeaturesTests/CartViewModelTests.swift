import Clocks
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

@Suite @MainActor struct CartViewModelTests {
    let cart = CartServiceDouble()
    let orders = OrderServiceDouble()
    let analytics = AnalyticsServiceDouble()
    let events = ShopEvents()
    let book = Fixture.product(1, price: 1_000)
    let spade = Fixture.product(2, price: 2_550, category: "garden")

    func priced(_ lines: [CartLine], revision: Int64) -> Cart {
        Cart(lines: lines, tax: lines.map(\.lineTotal).sum().applying(basisPoints: 1_000), revision: revision)
    }

    func appeared(with shown: Cart) async -> CartViewModel {
        cart.cart.returns(shown)
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: .signedInForTests(events: events))
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        return viewModel
    }

    func state(
        _ shown: Cart, checkoutPhase: SubmitPhaseName = .idle, lastOrder: Order? = nil, notices: [CartNotice] = []
    ) -> CartState {
        CartState(
            phase: .loaded, error: nil, lines: shown.lines.map(CartLineSnapshot.init), totals: CartTotals(shown),
            checkoutPhase: checkoutPhase, checkoutError: nil, lastOrder: lastOrder.map(OrderSnapshot.init),
            notices: notices)
    }

    @Test func showsTheCartWithTheServicesTotals() async {
        let shown = priced([Fixture.line(book, quantity: 2), Fixture.line(spade, quantity: 1)], revision: 3)
        let viewModel = await appeared(with: shown)
        let expected = state(shown)
        #expect(viewModel.state == expected)
        #expect(expected.totals == CartTotals(
            itemCount: 3, subtotal: Money(minorUnits: 4_550), tax: Money(minorUnits: 455), total: Money(minorUnits: 5_005)))
    }

    @Test func addingMergesThroughTheServiceAndShowsItsCart() async throws {
        let viewModel = await appeared(with: priced([Fixture.line(book, quantity: 1)], revision: 1))
        let merged = priced([Fixture.line(book, quantity: 3)], revision: 2)
        cart.add.returns(merged)
        try await viewModel.add(productId: book.id, quantity: 2)
        #expect(viewModel.state == state(merged))
        #expect(cart.add.calls == [.init(productId: book.id, quantity: 2)])
    }

    @Test func aChangeMadeElsewhereIsShownBeforeItsCallReturns() async throws {
        let viewModel = await appeared(with: priced([], revision: 1))
        // Another ViewModel's service call publishes the committed cart.
        let changed = priced([Fixture.line(spade, quantity: 1)], revision: 2)
        events.publish(.cartChanged(changed, shopper: Fixture.shopper))
        #expect(viewModel.state == state(changed))
        // A late, older copy does not replace it.
        events.publish(.cartChanged(priced([], revision: 1), shopper: Fixture.shopper))
        #expect(viewModel.state == state(changed))
    }

    @Test func refusedChangesLeaveTheCartUnchanged() async throws {
        let shown = priced([Fixture.line(book, quantity: 1)], revision: 1)
        let viewModel = await appeared(with: shown)
        cart.setQuantity.fails(ShopError.quantityExceedsMaximum(book.id, name: book.name, requested: 9, maximum: 5))

        let tooMany = await #expect(throws: ShopError.self) { try await viewModel.setQuantity(productId: book.id, quantity: 9) }
        #expect(tooMany?.reason == "quantityExceedsMaximum")
        let negative = await #expect(throws: ShopError.self) { try await viewModel.setQuantity(productId: book.id, quantity: -1) }
        #expect(negative?.reason == "invalidQuantity")
        cart.remove.fails(ShopError.notInCart(spade.id))
        let absent = await #expect(throws: ShopError.self) { try await viewModel.remove(productId: spade.id) }
        #expect(absent?.reason == "notInCart")
        #expect(viewModel.state == state(shown))
    }

    @Test func aLineNotShownYetIsTheStoresToRefuse() async throws {
        // A client that pipelines `add` then `setQuantity` sends the second before the first is shown.
        let viewModel = await appeared(with: priced([Fixture.line(book, quantity: 1)], revision: 1))
        cart.setQuantity.returns(priced([Fixture.line(book, quantity: 1), Fixture.line(spade, quantity: 2)], revision: 3))
        try await viewModel.setQuantity(productId: spade.id, quantity: 2)
        #expect(viewModel.state.lines.map(\.quantity) == [1, 2])
    }

    @Test func quantityZeroRemovesAndClearEmpties() async throws {
        let viewModel = await appeared(with: priced([Fixture.line(book, quantity: 1), Fixture.line(spade, quantity: 1)], revision: 1))
        cart.setQuantity.returns(priced([Fixture.line(spade, quantity: 1)], revision: 2))
        try await viewModel.setQuantity(productId: book.id, quantity: 0)
        #expect(viewModel.state.lines.map(\.productId) == [spade.id])
        cart.clear.returns(priced([], revision: 3))
        try await viewModel.clear()
        #expect(viewModel.state == state(priced([], revision: 3)))
    }

    @Test func checkoutPlacesTheOrderAndEmptiesTheCart() async throws {
        let lines = [Fixture.line(book, quantity: 2)]
        let viewModel = await appeared(with: priced(lines, revision: 1))
        let order = Fixture.order(1, lines: lines)
        let gate = Gate()
        orders.placeOrder.handle { [events] _ in
            await gate.wait()
            await events.publish(.cartChanged(Cart(lines: [], tax: .zero, revision: 2), shopper: Fixture.shopper))
            await events.publish(.orderPlaced(order, shopper: Fixture.shopper))
            return order
        }

        let checkout = Task { try await viewModel.checkout() }
        await settle { gate.waiting == 1 }
        #expect(viewModel.state == state(priced(lines, revision: 1), checkoutPhase: .submitting))
        // A second checkout (a double tap) waits for the first and checks out the cart it leaves.
        let again = Task { try await viewModel.checkout() }
        await settle { viewModel.checkoutsWaiting == 1 }
        #expect(orders.placeOrder.calls == [1])
        gate.open()
        #expect(try await checkout.value == order)
        let refusal = await #expect(throws: ShopError.self) { try await again.value }
        #expect(refusal?.reason == "emptyCart")
        #expect(orders.placeOrder.calls == [1])

        #expect(viewModel.state == state(priced([], revision: 2), checkoutPhase: .succeeded, lastOrder: order))
        #expect(viewModel.state.lastOrder?.createdAt.iso8601 == "2025-06-01T00:00:00Z")
    }

    @Test func aCheckoutAskedForWhileAnAddRunsChecksOutTheCartWithTheAdd() async throws {
        let viewModel = await appeared(with: priced([], revision: 1))
        let added = priced([Fixture.line(book, quantity: 1)], revision: 2)
        let gate = Gate()
        cart.add.handle { _ in
            await gate.wait()
            return added
        }
        let order = Fixture.order(1, lines: added.lines)
        orders.placeOrder.returns(order)

        let add = Task { try await viewModel.add(productId: book.id, quantity: 1) }
        await settle { gate.waiting == 1 }
        let checkout = Task { try await viewModel.checkout() }
        await settle { viewModel.checkoutsWaiting == 1 }
        #expect(orders.placeOrder.calls.isEmpty)
        gate.open()
        try await add.value
        #expect(try await checkout.value == order)
        #expect(orders.placeOrder.calls == [2])  // the revision the add left
    }

    @Test func aChangeAskedForWhileACheckoutRunsStartsAfterIt() async throws {
        let lines = [Fixture.line(book, quantity: 1)]
        let viewModel = await appeared(with: priced(lines, revision: 1))
        let order = Fixture.order(1, lines: lines)
        let gate = Gate()
        orders.placeOrder.handle { [events] _ in
            await gate.wait()
            await events.publish(.cartChanged(Cart(lines: [], tax: .zero, revision: 2), shopper: Fixture.shopper))
            return order
        }
        let next = priced([Fixture.line(book, quantity: 2)], revision: 3)
        cart.add.returns(next)

        let checkout = Task { try await viewModel.checkout() }
        await settle { gate.waiting == 1 }
        let add = Task { try await viewModel.add(productId: book.id, quantity: 2) }
        await settle { viewModel.changesWaitingForCheckout == 1 }
        #expect(cart.add.calls.isEmpty)  // not in the cart the order takes
        gate.open()
        #expect(try await checkout.value == order)
        try await add.value
        #expect(cart.add.calls == [.init(productId: book.id, quantity: 2)])
        #expect(viewModel.cart == next)
    }

    @Test func aCheckoutWaitingWhileTheSessionSignsOutChecksOutNothing() async throws {
        let accounts = AccountServiceDouble()
        accounts.signOut.returns(())
        let session = ShopSession.signedInForTests(events: events, accounts: accounts)
        let lines = [Fixture.line(book, quantity: 1)]
        cart.cart.returns(priced(lines, revision: 1))
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: session)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        let gate = Gate()
        let placed = Locked(0)
        orders.placeOrder.handle { [events, lines] _ in
            if placed.withLock({ $0 += 1; return $0 }) == 1 {
                await gate.wait()
                await events.publish(.cartChanged(Cart(lines: [], tax: .zero, revision: 2), shopper: Fixture.shopper))
            }
            return Fixture.order(1, lines: lines)
        }
        cart.add.returns(priced(lines, revision: 1))  // the add lands in the new guest's cart

        // checkout, add, checkout, sign-out in one write: the sign-out ends before the second checkout's turn.
        let first = Task { try await viewModel.checkout() }
        await settle { gate.waiting == 1 }
        let add = Task { try await viewModel.add(productId: book.id, quantity: 1) }
        let second = Task { try await viewModel.checkout() }
        await settle { viewModel.checkoutsWaiting == 1 && viewModel.changesWaitingForCheckout == 1 }
        let signOut = Task { try await session.signOut() }
        gate.open()
        #expect(try await first.value != nil)
        try await signOut.value
        try await add.value
        let refusal = await #expect(throws: ShopError.self) { try await second.value }
        #expect(refusal?.reason == "signInRequired")
        #expect(placed.withLock { $0 } == 1)  // the guest's cart was not checked out
    }

    @Test func aSecondCheckoutAfterARefusedOneDoesNotCheckOutTheCartItWasNotShown() async throws {
        let lines = [Fixture.line(book, quantity: 1)]
        let viewModel = await appeared(with: priced(lines, revision: 1))
        let gate = Gate()
        let repriced = priced([Fixture.line(book, quantity: 1)], revision: 2)
        orders.placeOrder.handle { _ in
            await gate.wait()
            throw ShopError.cartChanged(revision: 2)
        }
        cart.cart.returns(repriced)  // what the refused checkout shows afterwards

        let first = Task { try await viewModel.checkout() }
        await settle { gate.waiting == 1 }
        let second = Task { try await viewModel.checkout() }  // a double tap, on the cart at revision 1
        await settle { viewModel.checkoutsWaiting == 1 }
        gate.open()
        let firstRefusal = await #expect(throws: ShopError.self) { try await first.value }
        #expect(firstRefusal?.reason == "cartChanged")
        let secondRefusal = await #expect(throws: ShopError.self) { try await second.value }
        #expect(secondRefusal?.reason == "cartChanged")
        // Both asked for the revision shown when they were sent, not the one shown after the first's refusal.
        #expect(orders.placeOrder.calls == [1, 1])
        #expect(viewModel.cart == repriced)
    }

    @Test func aCheckoutWaitingWhenTheScreenClosesIsCancelled() async throws {
        let viewModel = await appeared(with: priced([Fixture.line(book, quantity: 1)], revision: 1))
        let gate = Gate()
        cart.add.handle { [book] _ in
            await gate.wait()
            return Cart(lines: [Fixture.line(book, quantity: 2)], tax: .zero, revision: 2)
        }
        orders.placeOrder.returns(Fixture.order(1, lines: [Fixture.line(book, quantity: 2)]))
        let add = Task { try await viewModel.add(productId: book.id, quantity: 1) }
        await settle { gate.waiting == 1 }
        let checkout = Task { try await viewModel.checkout() }
        await settle { viewModel.checkoutsWaiting == 1 }
        viewModel.close()
        gate.open()
        _ = try? await add.value
        await #expect(throws: CancellationError.self) { try await checkout.value }
        #expect(orders.placeOrder.calls.isEmpty)
    }

    /// A cart screen and a product page of one session, on one set of service doubles.
    func cartAndProductPage(showing shown: Cart) async -> (CartViewModel, ProductDetailViewModel) {
        let session = ShopSession.signedInForTests(events: events)
        cart.cart.returns(shown)
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: session)
        viewModel.appear()
        let catalog = CatalogServiceDouble()
        catalog.product.returns(book)
        let favorites = FavoritesServiceDouble()
        favorites.isFavorite.returns(false)
        let page = ProductDetailViewModel(
            productId: book.id, catalog: catalog, favorites: favorites, cart: cart, analytics: analytics,
            events: events, session: session, clock: TestClock())
        page.appear()
        await settle { viewModel.phase == .loaded && page.phase == .loaded }
        return (viewModel, page)
    }

    @Test func aCheckoutAskedForWhileAProductPagesAddRunsChecksOutTheCartWithTheAdd() async throws {
        let (viewModel, page) = await cartAndProductPage(showing: priced([], revision: 1))
        let added = priced([Fixture.line(book, quantity: 1)], revision: 2)
        let gate = Gate()
        cart.add.handle { [events] _ in
            await gate.wait()
            await events.publish(.cartChanged(added, shopper: Fixture.shopper))  // as the live service does
            return added
        }
        let order = Fixture.order(1, lines: added.lines)
        orders.placeOrder.returns(order)

        let add = Task { try await page.addToCart() }
        await settle { gate.waiting == 1 }
        let checkout = Task { try await viewModel.checkout() }
        await settle { viewModel.checkoutsWaiting == 1 }
        #expect(orders.placeOrder.calls.isEmpty)
        gate.open()
        try await add.value
        #expect(try await checkout.value == order)
        #expect(orders.placeOrder.calls == [2])  // the revision the product page's add left
    }

    @Test func aProductPagesAddAskedForWhileACheckoutRunsStartsAfterIt() async throws {
        let lines = [Fixture.line(book, quantity: 1)]
        let (viewModel, page) = await cartAndProductPage(showing: priced(lines, revision: 1))
        let order = Fixture.order(1, lines: lines)
        let gate = Gate()
        orders.placeOrder.handle { [events] _ in
            await gate.wait()
            await events.publish(.cartChanged(Cart(lines: [], tax: .zero, revision: 2), shopper: Fixture.shopper))
            return order
        }
        cart.add.returns(priced([Fixture.line(book, quantity: 1)], revision: 3))

        let checkout = Task { try await viewModel.checkout() }
        await settle { gate.waiting == 1 }
        let add = Task { try await page.addToCart() }
        await settle { viewModel.changesWaitingForCheckout == 1 }
        #expect(cart.add.calls.isEmpty)  // not in the cart the order takes
        gate.open()
        #expect(try await checkout.value == order)
        try await add.value
        #expect(cart.add.calls.count == 1)
    }

    @Test func checkoutShortOfStockNamesTheLineAndChangesNothing() async throws {
        let shown = priced([Fixture.line(book, quantity: 2), Fixture.line(spade, quantity: 5)], revision: 1)
        let viewModel = await appeared(with: shown)
        orders.placeOrder.fails(ShopError.quantityExceedsStock(spade.id, name: spade.name, requested: 5, available: 1))
        let error = await #expect(throws: ShopError.self) { try await viewModel.checkout() }
        #expect(error?.reason == "quantityExceedsStock")
        #expect(error?.details["productId"] == spade.id)
        #expect(viewModel.state == state(shown))
    }

    @Test func anUnavailableCheckoutShowsAsFailed() async throws {
        let viewModel = await appeared(with: priced([Fixture.line(book, quantity: 1)], revision: 1))
        orders.placeOrder.fails(ShopError.serviceUnavailable("orders"))
        #expect(try await viewModel.checkout() == nil)
        #expect(viewModel.state.checkoutPhase == .failed)
        #expect(viewModel.state.checkoutError == ErrorInfo(message: ShopError.serviceUnavailable("orders").message, retryable: true))
        #expect(viewModel.state.lines.count == 1)
    }

    @Test func productDetailsAddIsShownInTheCartWhenItReturns() async throws {
        let viewModel = await appeared(with: priced([], revision: 1))
        let catalog = CatalogServiceDouble()
        let favorites = FavoritesServiceDouble()
        catalog.product.returns(book)
        favorites.isFavorite.returns(false)
        let added = priced([Fixture.line(book, quantity: 1)], revision: 2)
        cart.add.handle { [events] _ in
            await events.publish(.cartChanged(added, shopper: Fixture.shopper))  // as the live service does after its commit
            return added
        }
        let detail = ProductDetailViewModel(productId: book.id, catalog: catalog, favorites: favorites, cart: cart,
                                            analytics: analytics, events: events, session: .signedInForTests(events: events), clock: TestClock())
        detail.appear()
        await settle { detail.phase == .loaded }

        try await detail.addToCart()

        #expect(viewModel.state == state(added))
        detail.close()
    }

    @Test func aNewChangeAfterACheckoutStartsANewCheckoutStory() async throws {
        let lines = [Fixture.line(book, quantity: 1)]
        let viewModel = await appeared(with: priced(lines, revision: 1))
        let order = Fixture.order(1, lines: lines)
        orders.placeOrder.handle { [events] _ in
            await events.publish(.cartChanged(Cart(lines: [], tax: .zero, revision: 2), shopper: Fixture.shopper))
            await events.publish(.orderPlaced(order, shopper: Fixture.shopper))
            return order
        }
        try await viewModel.checkout()
        #expect(viewModel.state == state(priced([], revision: 2), checkoutPhase: .succeeded, lastOrder: order))

        let added = priced([Fixture.line(spade, quantity: 1)], revision: 3)
        cart.add.returns(added)
        try await viewModel.add(productId: spade.id, quantity: 1)
        #expect(viewModel.state == state(added))

        // Also after a failed checkout, and for a change made elsewhere.
        orders.placeOrder.fails(ShopError.serviceUnavailable("orders"))
        try await viewModel.checkout()
        #expect(viewModel.state.checkoutPhase == .failed)
        events.publish(.cartChanged(priced([], revision: 4), shopper: Fixture.shopper))
        #expect(viewModel.state == state(priced([], revision: 4)))
    }

    @Test func checkoutOfACartThatFailedToLoadSaysSoAndRefreshRetries() async throws {
        cart.cart.fails(ShopError.serviceUnavailable("cart"))
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: .signedInForTests(events: events))
        viewModel.appear()
        await settle { viewModel.state.phase == .failed }
        let error = await #expect(throws: ShopError.self) { try await viewModel.checkout() }
        #expect(error?.reason == "loadFailed")
        #expect(error?.isRetryable == true)
        #expect(error?.message.contains("Still loading") == false)
        #expect(orders.placeOrder.calls.isEmpty)

        let shown = priced([Fixture.line(book, quantity: 1)], revision: 1)
        cart.cart.returns(shown)
        #expect(await viewModel.refresh() == .completed)
        #expect(viewModel.state == state(shown))
    }

    @Test func aLineWhoseProductWasDeletedIsNamedUntilTheNextChange() async throws {
        let viewModel = await appeared(with: priced([Fixture.line(book, quantity: 1), Fixture.line(spade, quantity: 2)], revision: 1))
        // As the live catalog publishes a deletion: the ids, then the cart without their lines.
        events.publish(.productsDeleted([spade.id]))
        let after = priced([Fixture.line(book, quantity: 1)], revision: 2)
        events.publish(.cartChanged(after, shopper: Fixture.shopper))
        let notice = CartNotice(productId: spade.id, name: spade.name, reason: .productDeleted,
                                message: "\(spade.name) was removed from your cart: it is no longer sold.")
        #expect(viewModel.state == state(after, notices: [notice]))

        let changed = priced([Fixture.line(book, quantity: 2)], revision: 3)
        cart.setQuantity.returns(changed)
        try await viewModel.setQuantity(productId: book.id, quantity: 2)
        #expect(viewModel.state == state(changed))

        events.publish(.productsDeleted([book.id]))
        #expect(viewModel.state.notices.map(\.productId) == [book.id])
        viewModel.dismissNotices()
        #expect(viewModel.state.notices.isEmpty)
    }

    @Test func aChangeCancelledBeforeItIsStoredThrowsCancellationAndChangesNothing() async throws {
        let shown = priced([Fixture.line(book, quantity: 1)], revision: 1)
        let viewModel = await appeared(with: shown)
        let gate = Gate()
        cart.add.handle { _ in
            await gate.wait()
            throw CancellationError()  // as a service cancelled before its write does
        }
        let add = Task { try await viewModel.add(productId: spade.id, quantity: 1) }
        await settle { gate.waiting == 1 }
        add.cancel()
        gate.open()
        await #expect(throws: CancellationError.self) { try await add.value }
        #expect(viewModel.state == state(shown))

        orders.placeOrder.handle { _ in throw CancellationError() }
        await #expect(throws: CancellationError.self) { try await viewModel.checkout() }
        #expect(viewModel.state == state(shown))
    }

    @Test func aChangeStoredBeforeItsCallerWasCancelledSucceeds() async throws {
        let viewModel = await appeared(with: priced([], revision: 1))
        let gate = Gate()
        let added = priced([Fixture.line(book, quantity: 1)], revision: 2)
        cart.add.handle { _ in
            await gate.wait()
            return added  // the write committed; cancellation came too late to stop it
        }
        let add = Task { try await viewModel.add(productId: book.id, quantity: 1) }
        await settle { gate.waiting == 1 }
        add.cancel()
        gate.open()
        try await add.value
        #expect(viewModel.state == state(added))
    }
}
