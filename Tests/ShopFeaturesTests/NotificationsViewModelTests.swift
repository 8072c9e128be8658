import Foundation
import Shop
import TestWaits
import Testing
@_spi(Testing) @testable import ShopFeatures

@Suite @MainActor struct NotificationsViewModelTests {
    let events = ShopEvents()
    let accounts = AccountServiceDouble()
    let notifications: NotificationServiceDouble

    init() {
        notifications = NotificationServiceDouble(events: events)
    }

    func appeared(page: InboxPage) async throws -> (NotificationsViewModel, ShopSession) {
        let session = ShopSession.signedInForTests(events: events, accounts: accounts)
        notifications.inbox.returns(page)
        let viewModel = try NotificationsViewModel(notifications: notifications, events: events, session: session)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        return (viewModel, session)
    }

    func state(_ items: [InboxNotification], unread: Int, hasMore: Bool = false, enabled: Bool = true) -> NotificationsState {
        NotificationsState(
            phase: .loaded, error: nil, items: items.map(NotificationItem.init), unreadCount: unread, hasMore: hasMore,
            loadMorePhase: .idle, loadMoreError: nil, enabled: enabled)
    }

    @Test func aGuestCannotOpenTheInbox() {
        let session = ShopSession(accounts: accounts, events: events, clock: ContinuousClock(), makeGuestId: { "guest-1" })
        #expect(throws: ShopError.signInRequired("see your notifications")) {
            try NotificationsViewModel(notifications: notifications, events: events, session: session)
        }
    }

    @Test func loadsTheNewestPageAndShowsArrivalsAtTheTop() async throws {
        let older = [Fixture.notification(3), Fixture.notification(2, isRead: true)]
        let (viewModel, _) = try await appeared(page: InboxPage(items: older, unreadCount: 1, hasMore: false))
        #expect(notifications.inbox.calls == [.init(shopper: Fixture.shopper, before: nil, limit: 20)])
        #expect(viewModel.state == state(older, unread: 1))

        let new = Fixture.notification(4, kind: .orderPlaced)
        events.publish(.notificationArrived(new, replacing: nil, unreadCount: 2, shopper: Fixture.shopper))
        events.publish(.notificationArrived(Fixture.notification(9), replacing: nil, unreadCount: 7, shopper: Fixture.otherShopper))
        await settle { viewModel.items.count == 3 }
        #expect(viewModel.state == state([new] + older, unread: 2))
    }

    @Test func aCoalescedArrivalReplacesTheUnreadOneItUpdates() async throws {
        let older = [Fixture.notification(3), Fixture.notification(2)]
        let (viewModel, _) = try await appeared(page: InboxPage(items: older, unreadCount: 2, hasMore: false))
        var updated = Fixture.notification(5)
        updated.productId = "p-0002"
        events.publish(.notificationArrived(updated, replacing: "n-2", unreadCount: 2, shopper: Fixture.shopper))
        await settle { viewModel.items.first?.id == "n-5" }
        #expect(viewModel.state == state([updated, Fixture.notification(3)], unread: 2))
    }

    @Test func anArrivalReplacingOneNeverShownStillReplacesTheUnreadOneShown() async throws {
        // Another server stored n-5 (replacing n-2) and then n-7 (replacing n-5) before this one read the log:
        // n-5's row was gone, so only n-7 arrives, naming n-5.
        var readEarlier = Fixture.notification(1, isRead: true)
        readEarlier.productId = "p-0002"
        let older = [Fixture.notification(3), Fixture.notification(2), readEarlier]
        let (viewModel, _) = try await appeared(page: InboxPage(items: older, unreadCount: 2, hasMore: false))
        var latest = Fixture.notification(7)
        latest.productId = "p-0002"
        events.publish(.notificationArrived(latest, replacing: "n-5", unreadCount: 2, shopper: Fixture.shopper))
        await settle { viewModel.items.first?.id == "n-7" }
        #expect(viewModel.state == state([latest, Fixture.notification(3), readEarlier], unread: 2))
    }

    @Test func aLateArrivalOfAnOlderOneDoesNotHideTheNewerOneThatReplacedIt() async throws {
        // n-7 (which replaced n-5) is loaded; n-5's own arrival is delivered after it.
        var latest = Fixture.notification(7)
        latest.productId = "p-0002"
        let (viewModel, _) = try await appeared(page: InboxPage(items: [latest, Fixture.notification(3)], unreadCount: 2, hasMore: false))
        var late = Fixture.notification(5)
        late.productId = "p-0002"
        events.publish(.notificationArrived(late, replacing: "n-2", unreadCount: 2, shopper: Fixture.shopper))
        await events.settled()
        #expect(viewModel.state == state([latest, Fixture.notification(3)], unread: 2))
    }

    @Test func readsMadeElsewhereShow() async throws {
        let older = [Fixture.notification(3), Fixture.notification(2)]
        let (viewModel, _) = try await appeared(page: InboxPage(items: older, unreadCount: 5, hasMore: true))
        events.publish(.notificationsRead(ids: ["n-2", "n-1"], unreadCount: 3, shopper: Fixture.shopper))
        await settle { viewModel.unreadCount == 3 }
        #expect(viewModel.state == state([Fixture.notification(3), Fixture.notification(2, isRead: true)], unread: 3, hasMore: true))
        events.publish(.notificationsRead(ids: nil, unreadCount: 0, shopper: Fixture.shopper))
        await settle { viewModel.unreadCount == 0 }
        #expect(viewModel.items.allSatisfy { $0.isRead })
    }

    @Test func markAsReadMarksAShownNotificationAndRefusesAnUnknownOne() async throws {
        let older = [Fixture.notification(3), Fixture.notification(2)]
        let (viewModel, _) = try await appeared(page: InboxPage(items: older, unreadCount: 4, hasMore: true))
        await #expect(throws: ShopError.notificationNotFound("n-99")) { try await viewModel.markAsRead("n-99") }
        #expect(notifications.markRead.calls.isEmpty)
        notifications.markRead.returns(3)
        try await viewModel.markAsRead("n-3")
        #expect(notifications.markRead.calls == [["n-3"]])
        #expect(viewModel.state == state([Fixture.notification(3, isRead: true), Fixture.notification(2)], unread: 3, hasMore: true))
    }

    @Test func markAllReadMarksEveryNotification() async throws {
        let older = [Fixture.notification(3), Fixture.notification(2)]
        let (viewModel, _) = try await appeared(page: InboxPage(items: older, unreadCount: 30, hasMore: true))
        notifications.markAllRead.returns(())
        try await viewModel.markAllRead()
        #expect(notifications.markAllRead.calls == [Fixture.shopper])
        #expect(viewModel.state == state(
            [Fixture.notification(3, isRead: true), Fixture.notification(2, isRead: true)], unread: 0, hasMore: true))
    }

    @Test func loadMoreAppendsTheOlderPage() async throws {
        let first = (22...41).reversed().map { Fixture.notification(Int64($0)) }
        let (viewModel, _) = try await appeared(page: InboxPage(items: first, unreadCount: 41, hasMore: true))
        let second = (1...21).reversed().map { Fixture.notification(Int64($0)) }
        notifications.inbox.returns(InboxPage(items: second, unreadCount: 41, hasMore: false))
        #expect(await viewModel.loadMore() == .completed)
        #expect(notifications.inbox.calls.last == .init(shopper: Fixture.shopper, before: "n-22", limit: 20))
        #expect(viewModel.state == state(first + second, unread: 41, hasMore: false))
        #expect(await viewModel.loadMore() == .completed)  // nothing more: no call
        #expect(notifications.inbox.calls.count == 2)
    }

    @Test func aFailedPageShowsInLoadMorePhaseAndTheListStays() async throws {
        let first = [Fixture.notification(3)]
        let (viewModel, _) = try await appeared(page: InboxPage(items: first, unreadCount: 1, hasMore: true))
        notifications.inbox.fails(ShopError.serviceUnavailable("notifications"))
        _ = await viewModel.loadMore()
        #expect(viewModel.state.loadMorePhase == .failed)
        #expect(viewModel.state.loadMoreError?.retryable == true)
        #expect(viewModel.state.items == first.map(NotificationItem.init))
    }

    @Test func closingEndsTheIterationAndNothingMoreIsApplied() async throws {
        let session = ShopSession.signedInForTests(events: events, accounts: accounts)
        notifications.inbox.returns(InboxPage(items: [], unreadCount: 0, hasMore: false))
        let viewModel = try NotificationsViewModel(notifications: notifications, events: events, session: session)
        let before = events.subscriberCount
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        #expect(events.subscriberCount == before + 2)  // the session's switches and the inbox's changes
        viewModel.close()
        await settle { events.subscriberCount == before }
        #expect(events.subscriberCount == before)
        events.publish(.notificationArrived(Fixture.notification(1), replacing: nil, unreadCount: 1, shopper: Fixture.shopper))
        for _ in 0..<50 { await Task.yield() }
        #expect(viewModel.state == state([], unread: 0))
    }

    @Test func turningNotificationsOffShows() async throws {
        let (viewModel, _) = try await appeared(page: InboxPage(items: [], unreadCount: 0, hasMore: false))
        var account = Fixture.account
        account.notificationsEnabled = false
        events.publish(.accountChanged(account))
        #expect(viewModel.state == state([], unread: 0, enabled: false))
    }

    @Test func signingOutFailsTheScreenAndSigningInAsAnotherLoadsTheirInbox() async throws {
        let (viewModel, session) = try await appeared(page: InboxPage(items: [Fixture.notification(1)], unreadCount: 1, hasMore: false))
        accounts.signOut.returns(())
        try await session.signOut()
        await settle { viewModel.phase.name == .failed }
        #expect(viewModel.state.error == ErrorInfo(message: "Sign in to see your notifications.", retryable: false))
        #expect(viewModel.state.items.isEmpty)
        await #expect(throws: ShopError.signInRequired("see your notifications")) { try await viewModel.markAllRead() }

        let bob = Account(id: 2, email: "bob@example.com", name: "bob", bio: "", notificationsEnabled: false, createdAt: Fixture.date)
        accounts.adoptGuest.returns(GuestAdoption(cart: .empty, capped: []))
        let bobs = [Fixture.notification(7)]
        notifications.inbox.returns(InboxPage(items: bobs, unreadCount: 1, hasMore: false))
        try await session.signIn(AccountSession(account: bob, sessionId: "session-2", token: "sft_b", expiresAt: .distantFuture))
        await settle { viewModel.phase == .loaded }
        #expect(notifications.inbox.calls.last?.shopper == .account(2))
        #expect(viewModel.state == state(bobs, unread: 1, enabled: false))
        // Ann's notifications no longer show; Bob's do.
        events.publish(.notificationArrived(Fixture.notification(8), replacing: nil, unreadCount: 9, shopper: Fixture.shopper))
        events.publish(.notificationArrived(Fixture.notification(9), replacing: nil, unreadCount: 2, shopper: .account(2)))
        await settle { viewModel.items.count == 2 }
        #expect(viewModel.state == state([Fixture.notification(9)] + bobs, unread: 2, enabled: false))
    }

    @Test func whatArrivesDuringAnAbandonedRefreshStillShows() async throws {
        let older = [Fixture.notification(3)]
        let (viewModel, _) = try await appeared(page: InboxPage(items: older, unreadCount: 1, hasMore: false))
        let gate = Gate()
        notifications.inbox.handle { _ in
            await gate.wait()
            return InboxPage(items: older, unreadCount: 1, hasMore: false)
        }
        let refresh = Task { await viewModel.refresh() }
        await settle { gate.waiting == 1 }
        let new = Fixture.notification(4)
        events.publish(.notificationArrived(new, replacing: nil, unreadCount: 2, shopper: Fixture.shopper))
        refresh.cancel()
        gate.open()  // the store answers after all; the abandoned load shows nothing of it
        #expect(await refresh.value == .cancelled)
        await settle { viewModel.items.count == 2 }
        #expect(viewModel.state == state([new] + older, unread: 2))
    }
}
