import Shop

/// Everything the inbox screen shows, as one value.
public struct NotificationsState: Codable, Equatable, Sendable {
    public var phase: PhaseName
    /// The load's failure (`signInRequired`'s message once signed out); `null` when none.
    @ExplicitNull public var error: ErrorInfo?
    /// The notifications loaded so far, newest first.
    public var items: [NotificationItem]
    /// How many of the account's notifications are unread, loaded or not.
    public var unreadCount: Int
    /// Whether older notifications can be loaded (`loadMore`).
    public var hasMore: Bool
    public var loadMorePhase: PagingPhaseName
    @ExplicitNull public var loadMoreError: ErrorInfo?
    /// Whether the account has notifications turned on (its profile's switch); none arrive while off.
    public var enabled: Bool
}

/// One notification as the inbox shows it.
public struct NotificationItem: Codable, Equatable, Sendable {
    /// `n-<number>`.
    public var id: String
    public var kind: InboxNotification.Kind
    public var title: String
    public var body: String
    /// The product it is about, or `null`.
    @ExplicitNull public var productId: String?
    /// The order it is about, or `null`.
    @ExplicitNull public var orderId: String?
    public var createdAt: Timestamp
    public var isRead: Bool

    init(_ notification: InboxNotification) {
        id = notification.id
        kind = notification.kind
        title = notification.title
        body = notification.body
        productId = notification.productId
        orderId = notification.orderId
        createdAt = Timestamp(notification.createdAt)
        isRead = notification.isRead
    }
}
