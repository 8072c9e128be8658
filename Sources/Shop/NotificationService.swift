/// Each account's inbox: notifications of orders placed and of favourited products back in stock or
/// cheaper, stored with the change that caused them.
///
/// Guests have no inbox: every call for a guest throws ``ShopError`` `signInRequired`. Marking read for a
/// signed-in session (``WritingSession``) that was signed out or expired in the store throws
/// ``ShopError/sessionEnded`` and marks nothing.
public protocol NotificationService: Sendable {
    /// A page of the inbox, newest first.
    /// - Parameters:
    ///   - shopper: whose inbox.
    ///   - before: the id of the last notification already shown (the page starts after it), or nil for
    ///     the newest.
    ///   - limit: the most notifications to return.
    /// - Throws: `signInRequired` for a guest; storage failures.
    func inbox(of shopper: Shopper, before: String?, limit: Int) async throws -> InboxPage

    /// Marks the notifications in `ids` read (ids of other accounts, unknown or already read ones change
    /// nothing); every open inbox of the account, in every server, shows it.
    /// - Returns: the number of unread notifications after the change.
    /// - Throws: `signInRequired` for a guest; storage failures.
    @discardableResult
    func markRead(ids: [String], of shopper: Shopper) async throws -> Int

    /// Marks every notification of the inbox read.
    /// - Throws: `signInRequired` for a guest; storage failures.
    func markAllRead(of shopper: Shopper) async throws

    /// The changes of `shopper`'s inbox from now on, in the order they were stored, from this server and
    /// every other one on the database. Ending the iteration (or releasing the sequence) unsubscribes.
    @MainActor
    func changes(of shopper: Shopper) -> AsyncStream<InboxChange>
}
