import Foundation
import Observation
import Shop

/// The signed-in account's inbox: notifications newest first, the unread count, marking read, and older
/// pages on demand.
///
/// Needs a signed-in session (opening it for a guest is refused with `signInRequired`). Opening it starts
/// a task that iterates the notification service's ``NotificationService/changes(of:)``: notifications
/// stored anywhere (this server or another on the database) appear at the top, and reads made anywhere
/// show. Closing cancels that task, which ends the subscription. It follows the session: signing in as
/// someone else loads their inbox; signing out fails the screen with `signInRequired`'s message.
@MainActor @Observable
public final class NotificationsViewModel {
    /// Notifications per page.
    public static let pageSize = 20

    public private(set) var phase: Phase = .idle
    /// The notifications loaded so far, newest first.
    public private(set) var items: [InboxNotification] = []
    /// The account's unread count, as the store last counted it (each change carries it).
    public private(set) var unreadCount = 0
    /// Whether older notifications follow the loaded ones.
    public private(set) var hasMore = false
    public private(set) var loadMorePhase: PagingPhase = .idle
    /// Whether the account has notifications turned on.
    public private(set) var enabled: Bool

    @ObservationIgnored private let notifications: any NotificationService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private let session: ShopSession
    @ObservationIgnored private let load = ReplaceableLoad()
    @ObservationIgnored private var subscription: ShopSubscription?
    /// The task iterating the inbox's changes.
    @ObservationIgnored private var listening: Task<Void, Never>?
    /// Changes that arrived while the first page was loading, applied once it is shown.
    @ObservationIgnored private var pending: [InboxChange]?
    @ObservationIgnored private var loadMoreTask: Task<Bool, Never>?
    @ObservationIgnored private var loadMoreGeneration = 0

    /// Creates the ViewModel for the session's account.
    /// - Throws: ``ShopError`` `signInRequired` for a guest session.
    public init(notifications: any NotificationService, events: ShopEvents, session: ShopSession) throws {
        guard let account = session.account else { throw ShopError.signInRequired("see your notifications") }
        self.notifications = notifications
        self.events = events
        self.session = session
        enabled = account.notificationsEnabled
    }

    /// Creates the ViewModel from the service container.
    /// - Throws: ``ShopError`` `signInRequired` for a guest session.
    public convenience init(services: ShopServices, session: ShopSession) throws {
        try self.init(notifications: services.notifications, events: services.events, session: session)
    }

    /// The whole state as one value.
    public var state: NotificationsState {
        NotificationsState(
            phase: phase.name, error: phase.error, items: items.map(NotificationItem.init), unreadCount: unreadCount,
            hasMore: hasMore, loadMorePhase: loadMorePhase.name, loadMoreError: loadMorePhase.error, enabled: enabled)
    }

    // MARK: Lifecycle

    /// Follows the session and starts listening and loading.
    public func appear() {
        guard subscription == nil else { return }
        subscription = events.subscribe { [weak self] in self?.handle($0) }
        startLoad()
    }

    /// Cancels every task (the changes' iteration included, which unsubscribes) and stops following.
    public func close() {
        subscription?.cancel()
        subscription = nil
        stopListening()
        load.cancel()
        cancelLoadMore()
        if phase == .loading { phase = .idle }
    }

    // MARK: Intents

    /// Loads the newest page again (the retry after a failed load).
    public func refresh() async -> IntentOutcome {
        await load.outcome(of: startLoad())
    }

    /// Appends the next (older) page; a failure shows in `loadMorePhase` (the list stays loaded), and
    /// calling again retries. Does nothing when not loaded, nothing older exists, or a page is loading.
    public func loadMore() async -> IntentOutcome {
        guard phase == .loaded, hasMore, loadMorePhase != .loading, let shopper = session.account?.shopper else { return .completed }
        loadMorePhase = .loading
        loadMoreGeneration += 1
        let generation = loadMoreGeneration
        let before = items.last?.id
        let task = Task { [weak self, notifications] () -> Bool in
            let result: Result<InboxPage, any Error>
            do { result = .success(try await notifications.inbox(of: shopper, before: before, limit: Self.pageSize)) } catch { result = .failure(error) }
            guard let self, generation == self.loadMoreGeneration else { return false }
            guard !Task.isCancelled else {
                self.loadMorePhase = .idle
                return false
            }
            switch result {
            case .success(let page):
                let known = Set(self.items.map(\.id))
                self.items += page.items.filter { !known.contains($0.id) }
                self.hasMore = page.hasMore
                self.unreadCount = page.unreadCount
                self.loadMorePhase = .idle
            case .failure(let error):
                guard let info = Failure.loadError(error) else {
                    self.loadMorePhase = .idle
                    return false
                }
                self.loadMorePhase = .failed(info)
            }
            return true
        }
        loadMoreTask = task
        return await task.outcome(generation: generation) { self.loadMoreGeneration }
    }

    /// Marks one shown notification read; every open inbox of the account, in every server, shows it.
    /// - Throws: ``ShopError`` `notificationNotFound` for an id not in the loaded list, `notReady`/
    ///   `loadFailed`/`signInRequired` when no inbox is shown; a storage failure.
    public func markAsRead(_ id: String) async throws {
        let shopper = try requireLoaded()
        guard let index = items.firstIndex(where: { $0.id == id }) else { throw ShopError.notificationNotFound(id) }
        guard !items[index].isRead else { return }
        let unread = try await session.write(as: shopper, to: "see your notifications") { [notifications] in
            try await notifications.markRead(ids: [id], of: shopper)
        }
        guard session.shopper == shopper else { return }
        if let index = items.firstIndex(where: { $0.id == id }) { items[index].isRead = true }
        unreadCount = unread
    }

    /// Marks every notification of the account read (loaded or not).
    /// - Throws: as ``markAsRead(_:)`` (never `notificationNotFound`).
    public func markAllRead() async throws {
        let shopper = try requireLoaded()
        let shown = Set(items.map(\.id))
        try await session.write(as: shopper, to: "see your notifications") { [notifications] in try await notifications.markAllRead(of: shopper) }
        guard session.shopper == shopper else { return }
        for index in items.indices where shown.contains(items[index].id) { items[index].isRead = true }
        // What arrived meanwhile came after the read (its own change will say the count exactly).
        unreadCount = items.filter { !$0.isRead && !shown.contains($0.id) }.count
    }

    // MARK: Loading

    private func requireLoaded() throws -> Shopper {
        guard let shopper = session.account?.shopper else { throw ShopError.signInRequired("see your notifications") }
        switch phase {
        case .loaded: return shopper
        case .failed(let message, let retryable):
            throw ShopError.loadFailed("notifications", message: "The notifications could not be loaded: \(message)", retryable: retryable)
        case .idle, .loading: throw ShopError.notReady
        }
    }

    /// Starts listening to the session's inbox (changes wait in ``pending`` until the page is shown) and
    /// loads its newest page.
    @discardableResult
    private func startLoad() -> Task<Bool, Never> {
        stopListening()
        cancelLoadMore()
        let shopper = session.shopper
        if session.isSignedIn { listen(to: notifications.changes(of: shopper)) }
        let task = load.start(phase: .init(get: { [weak self] in self?.phase }, set: { [weak self] in self?.phase = $0 })) {
            [weak self, notifications] in
            do {
                guard shopper.accountId != nil else { throw ShopError.signInRequired("see your notifications") }
                let page = try await notifications.inbox(of: shopper, before: nil, limit: Self.pageSize)
                guard let self, !Task.isCancelled, self.session.shopper == shopper else { return false }
                self.items = page.items
                self.unreadCount = page.unreadCount
                self.hasMore = page.hasMore
                self.phase = .loaded
                let waiting = self.pending ?? []
                self.pending = nil
                for change in waiting { self.apply(change) }
            } catch {
                guard let self, !Task.isCancelled, let info = Failure.loadError(error) else { return false }
                self.stopListening()
                self.items = []
                self.unreadCount = 0
                self.hasMore = false
                self.phase = .failed(info)
            }
            return true
        }
        // A reload abandoned by its caller puts the loaded list back: what waited meanwhile applies to it.
        Task { [weak self] in
            guard !(await task.value), let self, self.phase == .loaded, let waiting = self.pending else { return }
            self.pending = nil
            for change in waiting { self.apply(change) }
        }
        return task
    }

    private func listen(to changes: AsyncStream<InboxChange>) {
        pending = []
        listening = Task { [weak self] in
            for await change in changes {
                guard let self else { return }
                if self.pending != nil { self.pending?.append(change) } else { self.apply(change) }
            }
        }
    }

    private func stopListening() {
        listening?.cancel()
        listening = nil
        pending = nil
    }

    private func cancelLoadMore() {
        loadMoreTask?.cancel()
        loadMoreTask = nil
        loadMoreGeneration += 1
        loadMorePhase = .idle
    }

    private func apply(_ change: InboxChange) {
        switch change {
        case .arrived(let notification, let replacing, let unread):
            if let replacing { items.removeAll { $0.id == replacing } }
            let seq = InboxNotification.seq(of: notification.id) ?? 0
            // An inbox holds one unread notification per kind and product, but the one this replaced may
            // not be the one shown: a server that read the log after a later replacement never saw the
            // ones between (their rows were gone), so any older unread one it replaced goes too. A newer
            // one shown already (a late delivery of this one) replaced this one: it stays, and this does
            // not show.
            var replacedAlready = false
            if notification.kind != .orderPlaced, let productId = notification.productId {
                let sameKind = { (item: InboxNotification) in
                    !item.isRead && item.kind == notification.kind && item.productId == productId && item.id != notification.id
                }
                replacedAlready = items.contains { sameKind($0) && (InboxNotification.seq(of: $0.id) ?? 0) > seq }
                items.removeAll { sameKind($0) && (InboxNotification.seq(of: $0.id) ?? 0) < seq }
            }
            if !replacedAlready, !items.contains(where: { $0.id == notification.id }) {
                // Newest first: an older one than every loaded (a late delivery) waits for its page.
                let index = items.firstIndex { (InboxNotification.seq(of: $0.id) ?? 0) < seq } ?? items.endIndex
                if index < items.endIndex || !hasMore { items.insert(notification, at: index) }
            }
            unreadCount = unread
        case .read(let ids, let unread):
            let read = ids.map(Set.init)
            for index in items.indices where !items[index].isRead && (read?.contains(items[index].id) ?? true) {
                items[index].isRead = true
            }
            unreadCount = unread
        case .reload:
            events.track(startLoad())
        }
    }

    // MARK: Feed

    private func handle(_ event: ShopEvent) {
        switch event {
        case .accountChanged(let account) where account.id == session.account?.id:
            enabled = account.notificationsEnabled
        case .sessionChanged:
            if let account = session.account { enabled = account.notificationsEnabled }
            events.track(startLoad())
        default:
            break
        }
    }
}
