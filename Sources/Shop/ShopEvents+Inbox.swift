extension ShopEvents {
    /// The changes of `shopper`'s inbox published from now on, as an asynchronous sequence: the events
    /// naming the shopper's notifications, and ``InboxChange/reload`` on a resync. Ending the iteration
    /// (or releasing the sequence) unsubscribes.
    ///
    /// Delivery is asynchronous (the iterating task applies a change after the publish returns). So that an
    /// action's answer, which waits for ``settled()``, still comes after every open inbox applied what it
    /// caused, each change is followed by tracked work queued on the main actor behind the iterating
    /// task's resumption.
    public func inboxChanges(of shopper: Shopper) -> AsyncStream<InboxChange> {
        let (stream, continuation) = AsyncStream<InboxChange>.makeStream()
        let subscription = subscribe { [weak self] event in
            let change: InboxChange
            switch event {
            case .notificationArrived(let notification, let replacing, let unreadCount, let owner) where owner == shopper:
                change = .arrived(notification, replacing: replacing, unreadCount: unreadCount)
            case .notificationsRead(let ids, let unreadCount, let owner) where owner == shopper:
                change = .read(ids: ids, unreadCount: unreadCount)
            case .resync:
                change = .reload
            default:
                return
            }
            continuation.yield(change)
            self?.track(Task { @MainActor in await Task.yield() })
        }
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }
}
