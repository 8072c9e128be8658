/// One page of an account's inbox, newest first.
public struct InboxPage: Equatable, Sendable {
    /// The notifications of the page, newest first.
    public var items: [InboxNotification]
    /// How many of the account's notifications (on any page) are unread.
    public var unreadCount: Int
    /// Whether older notifications follow the page.
    public var hasMore: Bool

    /// Creates a page.
    public init(items: [InboxNotification], unreadCount: Int, hasMore: Bool) {
        self.items = items
        self.unreadCount = unreadCount
        self.hasMore = hasMore
    }
}
