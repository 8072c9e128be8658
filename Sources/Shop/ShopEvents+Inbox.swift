extension ShopEvents {
    /// The changes of `shopper`'s inbox published from now on, as an asynchronous sequence: the events
    /// naming the shopper's notifications, and ``InboxChange/reload`` on a resync. Ending the iteration
    /// (or releasing the sequence) unsubscribes.
    public func inboxChanges(of shopper: Shopper) -> AsyncStream<InboxChange> {
        let (stream, continuation) = AsyncStream<InboxChange>.makeStream()
        let subscription = subscribe { event in
            switch event {
            case .notificationArrived(let notification, let replacing, let unreadCount, let owner) where owner == shopper:
                continuation.yield(.arrived(notification, replacing: replacing, unreadCount: unreadCount))
            case .notificationsRead(let ids, let unreadCount, let owner) where owner == shopper:
                continuation.yield(.read(ids: ids, unreadCount: unreadCount))
            case .resync:
                continuation.yield(.reload)
            default:
                break
            }
        }
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }
}
