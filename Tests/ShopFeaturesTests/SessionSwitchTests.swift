import Clocks
import Foundation
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

/// The shop's ViewModels follow the session: each shows its shopper's data only, and a sign-in or
/// sign-out shows the new shopper's.
@Suite @MainActor struct SessionSwitchTests {
    let accounts = AccountServiceDouble()
    let cart = CartServiceDouble()
    let orders = OrderServiceDouble()
    let analytics = AnalyticsServiceDouble()
    let events = ShopEvents()
    let session: ShopSession

    init() {
        session = ShopSession(accounts: accounts, events: events, clock: TestClock(), makeGuestId: { "guest-1" })
    }

    func priced(_ lines: [CartLine], revision: Int64) -> Cart {
        Cart(lines: lines, tax: .zero, revision: revision)
    }

    @Test func aGuestCannotCheckOut() async throws {
        cart.cart.returns(priced([Fixture.line(Fixture.product(1), quantity: 1)], revision: 1))
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: session)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        await #expect(throws: ShopError.signInRequired("check out")) { try await viewModel.checkout() }
        #expect(orders.placeOrder.calls.isEmpty)
    }

    @Test func anotherShoppersCartChangesAreNotShown() async throws {
        cart.cart.returns(priced([], revision: 1))
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: session)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        events.publish(.cartChanged(priced([Fixture.line(Fixture.product(2), quantity: 3)], revision: 9), shopper: .guest("guest-2")))
        events.publish(.cartChanged(priced([Fixture.line(Fixture.product(2), quantity: 3)], revision: 9), shopper: Fixture.shopper))
        #expect(viewModel.lines.isEmpty)
    }

    @Test func signingInShowsTheAccountsCartWithTheCappedLinesAsNotices() async throws {
        let guestCart = priced([Fixture.line(Fixture.product(1), quantity: 9)], revision: 4)
        let accountCart = priced([Fixture.line(Fixture.product(1), quantity: 5)], revision: 2)
        cart.cart.handle { [session] _ in await session.shopper == Fixture.shopper ? accountCart : guestCart }
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: session)
        viewModel.appear()
        await settle { viewModel.cart == guestCart }

        let capped = CappedLine(productId: "p-0001", name: "Product 1", requested: 9, kept: 5)
        accounts.adoptGuest.returns(GuestAdoption(cart: accountCart, capped: [capped]))
        try await session.signIn(Fixture.signedIn)
        await events.settled()
        // Revision 2 of the account's cart replaces revision 4 of the guest's: revisions are per cart.
        #expect(viewModel.cart == accountCart)
        #expect(viewModel.state.notices == [CartNotice(capped: capped)])
        viewModel.dismissNotices()
        #expect(viewModel.state.notices.isEmpty)
        #expect(session.cappedLines.isEmpty)
    }

    @Test func signingOutShowsAnEmptyGuestCartAndNoOrders() async throws {
        let accountCart = priced([Fixture.line(Fixture.product(1), quantity: 2)], revision: 3)
        cart.cart.handle { [session] _ in await session.shopper == Fixture.shopper ? accountCart : .empty }
        orders.recentOrders.returns([Fixture.order(1, lines: accountCart.lines)])
        accounts.adoptGuest.returns(GuestAdoption(cart: accountCart, capped: []))
        try await session.signIn(Fixture.signedIn)
        let catalog = CatalogServiceDouble()
        catalog.featured.returns([])
        catalog.categories.returns([])
        let recommendations = RecommendationServiceDouble()
        recommendations.recommendations.returns([])
        analytics.trending.returns([])
        let cartView = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: session)
        let dashboard = DashboardViewModel(
            catalog: catalog, orders: orders, recommendations: recommendations, analytics: analytics, events: events, session: session)
        cartView.appear()
        dashboard.appear()
        await settle { cartView.cart == accountCart && dashboard.recentOrders.phase == .loaded }
        #expect(dashboard.recentOrders.items.count == 1)

        accounts.signOut.returns(())
        try await session.signOut()
        await events.settled()
        #expect(cartView.cart == .empty)
        #expect(dashboard.recentOrders.items.isEmpty)
        #expect(dashboard.state.recentOrders.phase == .failed)
        #expect(dashboard.state.recentOrders.error?.message == "Sign in to see your orders.")
    }

    @Test func aSignInWaitsForTheGuestsWritesAndWritesDuringItGoToTheAccount() async throws {
        let gate = Gate()
        cart.cart.returns(.empty)
        cart.add.handle { _ in
            await gate.wait()
            return .empty
        }
        accounts.adoptGuest.returns(GuestAdoption(cart: .empty, capped: []))
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: session)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }

        let guestAdd = Task { try await viewModel.add(productId: "p-0001", quantity: 1) }
        await settle { cart.add.calls.count == 1 }
        let signIn = Task { try await session.signIn(Fixture.signedIn) }
        let duringSwitch = Task { try await viewModel.add(productId: "p-0002", quantity: 1) }
        for _ in 0..<50 { await Task.yield() }
        #expect(accounts.adoptGuest.calls.isEmpty)  // the guest's add is still being stored
        #expect(cart.add.calls.count == 1)  // the add sent meanwhile waits for the switch
        gate.open()
        try await guestAdd.value
        try await signIn.value
        try await duringSwitch.value
        #expect(accounts.adoptGuest.calls.count == 1)
        #expect(cart.add.calls.count == 2)
        #expect(session.shopper == Fixture.shopper)
    }

    @Test func aResumedSessionIsNotRevokedWhenItsSignInFails() async throws {
        var resumed = Fixture.signedIn
        resumed.isNew = false
        accounts.adoptGuest.fails(ShopError.serviceUnavailable("accounts"))
        await #expect(throws: ShopError.self) { try await session.signIn(resumed) }
        #expect(accounts.signOut.calls.isEmpty)  // other tabs and servers hold it
        #expect(session.isSignedIn == false)
    }

    /// A feed reads other servers' changes of one shopper's data only for the shoppers sessions show: each
    /// session counts its own, the new one before the ViewModels load its data, and none once it is gone.
    @Test func aSessionShowsItsShopperToTheFeedAndSwitchesItBeforeTheViewModelsLoad() async throws {
        let shown = ShownShoppers()
        let events = ShopEvents(shownShoppers: shown)
        var session: ShopSession? = ShopSession(accounts: accounts, events: events, clock: TestClock(), makeGuestId: { "guest-7" })
        #expect(shown.contains(.guest("guest-7")) && !shown.contains(Fixture.shopper))

        var shownWhenLoaded: [Bool] = []
        let subscription = events.subscribe { event in
            if case .sessionChanged(let shopper) = event { shownWhenLoaded.append(shown.contains(shopper)) }
        }
        defer { subscription.cancel() }
        accounts.adoptGuest.returns(GuestAdoption(cart: .empty, capped: []))
        try await session?.signIn(Fixture.signedIn)
        #expect(shownWhenLoaded == [true])
        #expect(shown.contains(Fixture.shopper) && !shown.contains(.guest("guest-7")))
        let other = ShopSession.signedInForTests(events: events, accounts: accounts)
        #expect(!shown.contains(.guest("test-guest")))
        // Two sessions show the account: one going leaves it shown.
        accounts.signOut.returns(())
        try await other.signOut()
        #expect(shown.contains(Fixture.shopper) && shown.contains(.guest("test-guest")))
        session = nil
        #expect(!shown.contains(Fixture.shopper))
    }

    /// A profile saved elsewhere while a sign-in moves the guest's data is the one the session shows: the
    /// account is shown to the feed from the sign-in's start, and its change is kept.
    @Test func aProfileChangedWhileSigningInIsTheOneShown() async throws {
        let shown = ShownShoppers()
        let events = ShopEvents(shownShoppers: shown)
        let session = ShopSession(accounts: accounts, events: events, clock: TestClock(), makeGuestId: { "guest-8" })
        var renamed = Fixture.account
        renamed.name = "ann b"
        let shownWhileAdopting = Locked(false)
        accounts.adoptGuest.handle { [renamed] _ in
            shownWhileAdopting.withLock { $0 = shown.contains(Fixture.shopper) }
            await events.publish(.accountChanged(renamed))
            return GuestAdoption(cart: .empty, capped: [])
        }
        try await session.signIn(Fixture.signedIn)
        #expect(shownWhileAdopting.withLock { $0 })
        #expect(session.account == renamed)
        #expect(shown.contains(Fixture.shopper) && !shown.contains(.guest("guest-8")))
    }

    /// A resync while a sign-in moves the guest's data (changes of the log were missed) asks the store about the
    /// session being switched to: a profile saved meanwhile is the one shown.
    @Test func aResyncWhileSigningInAsksAboutTheSessionItSwitchesTo() async throws {
        var renamed = Fixture.account
        renamed.name = "ann c"
        accounts.activeAccount.returns(renamed)
        accounts.adoptGuest.handle { [events] _ in
            await events.publish(.resync)
            return GuestAdoption(cart: .empty, capped: [])
        }
        try await session.signIn(Fixture.signedIn)
        await events.settled()
        #expect(session.account == renamed)
        #expect(session.isSignedIn)
    }

    @Test func aResyncAsksWhetherTheSessionStillStands() async throws {
        accounts.adoptGuest.returns(GuestAdoption(cart: .empty, capped: []))
        try await session.signIn(Fixture.signedIn)
        accounts.activeAccount.returns(nil)  // signed out while this server missed the log's entries
        events.publish(.resync)
        await events.settled()
        #expect(session.isSignedIn == false)
        #expect(session.endedReason == "You were signed out in another window.")
    }
}
