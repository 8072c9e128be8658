import Clocks
import Foundation
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

/// A session's writes name it to the store (``WritingSession``); when the store answers that it ended there
/// (signed out by another server, or expired) before the feed said so here, the write fails and the session
/// becomes a guest at once, as when the feed tells it.
@Suite @MainActor struct SessionEndedInStoreTests {
    let accounts = AccountServiceDouble()
    let cart = CartServiceDouble()
    let orders = OrderServiceDouble()
    let analytics = AnalyticsServiceDouble()
    let events = ShopEvents()
    let session: ShopSession

    init() async throws {
        session = ShopSession(accounts: accounts, events: events, clock: TestClock(), makeGuestId: { "guest-1" })
        accounts.adoptGuest.returns(GuestAdoption(cart: .empty, capped: []))
        try await session.signIn(Fixture.signedIn)
    }

    @Test func aWriteNamesTheSignedInSessionAndAGuestsNone() async throws {
        let named = Locked<[String?]>([])
        cart.cart.returns(.empty)
        cart.add.handle { _ in
            named.withLock { $0.append(WritingSession.id) }
            return .empty
        }
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: session)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        try await viewModel.add(productId: "p-0001", quantity: 1)
        accounts.signOut.returns(())
        try await session.signOut()
        try await viewModel.add(productId: "p-0001", quantity: 1)
        #expect(named.withLock { $0 } == [Fixture.signedIn.sessionId, nil])
    }

    @Test func aWriteRefusedForAnEndedSessionMakesTheSessionAGuest() async throws {
        let accountCart = Cart(lines: [Fixture.line(Fixture.product(1), quantity: 1)], tax: .zero, revision: 3)
        cart.cart.handle { [session] _ in await session.shopper == Fixture.shopper ? accountCart : .empty }
        cart.add.fails(ShopError.sessionEnded)
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: session)
        let login = LoginViewModel(accounts: accounts, session: session)
        viewModel.appear()
        await settle { viewModel.cart == accountCart }

        await #expect(throws: ShopError.sessionEnded) { try await viewModel.add(productId: "p-0002", quantity: 1) }
        #expect(session.shopper == .guest("guest-1"))
        #expect(!session.isSignedIn)
        #expect(session.endedReason == "You were signed out in another window.")
        #expect(login.state.phase == .loggedOut)
        await events.settled()
        #expect(viewModel.cart == .empty)  // the guest's, loaded as after a sign-out seen on the feed
        #expect(accounts.signOut.calls.isEmpty)  // ended already: nothing to revoke
    }

    @Test func aCheckoutRefusedForAnEndedSessionLeavesTheCartAndMakesTheSessionAGuest() async throws {
        let accountCart = Cart(lines: [Fixture.line(Fixture.product(1), quantity: 1)], tax: .zero, revision: 3)
        cart.cart.handle { [session] _ in await session.shopper == Fixture.shopper ? accountCart : .empty }
        orders.placeOrder.fails(ShopError.sessionEnded)
        let viewModel = CartViewModel(cart: cart, orders: orders, analytics: analytics, events: events, session: session)
        viewModel.appear()
        await settle { viewModel.cart == accountCart }

        await #expect(throws: ShopError.sessionEnded) { try await viewModel.checkout() }
        #expect(!session.isSignedIn)
        #expect(viewModel.state.checkoutPhase == .idle)
        #expect(viewModel.lastOrder == nil)
    }
}
