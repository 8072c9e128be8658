/// A change of one account's inbox, as ``NotificationService/changes(of:)`` delivers it.
///
/// Each change carries the inbox's unread count after it, as the store counted it: a screen that shows a
/// page of the inbox keeps an exact count without loading the rest.
public enum InboxChange: Equatable, Sendable {
    /// A notification arrived (at the top). `replacing` names the unread notification of the same kind and
    /// product that it replaced (removed from the inbox), or is nil.
    case arrived(InboxNotification, replacing: String?, unreadCount: Int)
    /// Notifications were marked read: the ones in `ids` (those that were unread), or all when nil.
    case read(ids: [String]?, unreadCount: Int)
    /// Changes may have been missed (the change feed resynchronised): load the inbox again.
    case reload
}
