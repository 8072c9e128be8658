import Foundation
import GRDB
import Shop

/// The producers of notifications and the reading of notification rows.
///
/// A producer runs inside the transaction that stores the change it is about (a checkout, a product
/// update), so the notification is stored exactly when the change is, and every server sees it once,
/// through the change feed. Each returns the change-log entries it wrote with their events, for the
/// writer to publish after the commit (in log order, with its own entries).
///
/// Rules: only accounts (`a:` owners) with notifications enabled get any. A back-in-stock or price-drop
/// notification that is still unread for the same account and product is replaced by the new one (new
/// body and time, at the top, a new id) rather than duplicated, so a fast market cannot flood an inbox.
/// An inbox keeps its newest ``maximumPerAccount`` notifications.
package enum InboxRows {
    /// Change-log entries a producer wrote, in log order, with the events to publish for each.
    typealias Entries = [(seq: Int64, events: [ShopEvent])]

    /// How many notifications an inbox keeps; older ones are deleted as new ones arrive.
    package static let maximumPerAccount = 500

    /// The columns ``notification(_:)`` reads, in order.
    static let columns = "seq, kind, title, body, productId, orderId, createdAt, readAt"

    // MARK: Producers

    /// Notifies `owner` of the order it just placed (in the checkout's transaction).
    static func orderPlaced(_ db: Database, order: Order, owner: Shopper, at now: Date) throws -> [(seq: Int64, events: [ShopEvent])] {
        guard let accountId = owner.accountId, try notificationsEnabled(db, accountId: accountId) else { return [] }
        let notice = InboxNotices.orderPlaced(order)
        return [try insert(db, owner: owner, kind: .orderPlaced, title: notice.title, body: notice.body,
                           productId: nil, orderId: order.id, at: now)]
    }

    /// Notifies every account that favourited the product (and enabled notifications) that it came back
    /// in stock (stock 0 -> more) or that its price was lowered (in the product update's transaction).
    static func productChanged(_ db: Database, from old: Product, to new: Product, at now: Date) throws -> [(seq: Int64, events: [ShopEvent])] {
        let notices = InboxNotices.productChanged(from: old, to: new)
        guard !notices.isEmpty else { return [] }
        let owners = try String.fetchAll(db.cachedStatement(sql: """
            SELECT f.owner FROM favorite f JOIN account a ON f.owner = 'a:' || a.id
            WHERE f.productId = ? AND a.notificationsEnabled = 1 ORDER BY a.id
            """), arguments: [new.id]).compactMap(Shopper.init(storageKey:))
        var entries: Entries = []
        for owner in owners {
            for notice in notices {
                entries.append(try insert(db, owner: owner, kind: notice.kind, title: notice.title, body: notice.body,
                                          productId: new.id, orderId: nil, at: now))
            }
        }
        return entries
    }

    // MARK: Reading

    /// A notification from a row selected with ``columns`` (starting at `offset`).
    static func notification(_ row: Row, offset: Int = 0) -> InboxNotification {
        InboxNotification(
            id: InboxNotification.id(seq: row[offset]), kind: InboxNotification.Kind(rawValue: row[offset + 1]) ?? .orderPlaced,
            title: row[offset + 2], body: row[offset + 3], productId: row[offset + 4], orderId: row[offset + 5],
            createdAt: StoredDate.date(row[offset + 6]), isRead: (row[offset + 7] as Int64?) != nil)
    }

    /// One notification and its owner, or nil.
    static func notification(_ db: Database, seq: Int64) throws -> (notification: InboxNotification, owner: Shopper)? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT \(columns), owner FROM notification WHERE seq = ?"),
                                         arguments: [seq]),
              let owner = Shopper(storageKey: row[8]) else { return nil }
        return (notification(row), owner)
    }

    /// A page of `owner`'s inbox, newest first.
    static func page(_ db: Database, owner: Shopper, before: Int64?, limit: Int) throws -> InboxPage {
        let limit = max(limit, 0)
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT \(columns) FROM notification WHERE owner = ? AND seq < ? ORDER BY seq DESC LIMIT ?
            """), arguments: [owner.storageKey, before ?? .max, limit + 1])
        return InboxPage(items: rows.prefix(limit).map { notification($0) }, unreadCount: try unreadCount(db, owner: owner),
                         hasMore: rows.count > limit)
    }

    /// How many of `owner`'s notifications are unread.
    static func unreadCount(_ db: Database, owner: Shopper) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM notification WHERE owner = ? AND readAt IS NULL"),
                         arguments: [owner.storageKey]) ?? 0
    }

    // MARK: Writing

    private static func notificationsEnabled(_ db: Database, accountId: Int64) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT notificationsEnabled FROM account WHERE id = ?"), arguments: [accountId]) ?? false
    }

    /// Stores a notification (replacing an unread one of the same kind and product), keeps the inbox
    /// within its bound, and writes the change-log entry: subject `n-<new>` or `n-<new> n-<replaced>`.
    private static func insert(
        _ db: Database, owner: Shopper, kind: InboxNotification.Kind, title: String, body: String, productId: String?,
        orderId: String?, at now: Date
    ) throws -> (seq: Int64, events: [ShopEvent]) {
        let key = owner.storageKey
        var replaced: Int64?
        if let productId, kind != .orderPlaced {
            replaced = try Int64.fetchOne(db.cachedStatement(sql: """
                SELECT seq FROM notification WHERE owner = ? AND kind = ? AND productId = ? AND readAt IS NULL ORDER BY seq DESC LIMIT 1
                """), arguments: [key, kind.rawValue, productId])
            if let replaced { try db.execute(sql: "DELETE FROM notification WHERE seq = ?", arguments: [replaced]) }
        }
        let milliseconds = StoredDate.milliseconds(now)
        try db.cachedStatement(sql: """
            INSERT INTO notification (owner, kind, title, body, productId, orderId, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [key, kind.rawValue, title, body, productId, orderId, milliseconds])
        let seq = db.lastInsertedRowID
        try db.cachedStatement(sql: """
            DELETE FROM notification WHERE owner = ? AND seq <= (SELECT seq FROM notification WHERE owner = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)
            """).execute(arguments: [key, key, maximumPerAccount])
        let notification = InboxNotification(
            id: InboxNotification.id(seq: seq), kind: kind, title: title, body: body, productId: productId, orderId: orderId,
            createdAt: StoredDate.date(milliseconds), isRead: false)
        let replacedId = replaced.map(InboxNotification.id(seq:))
        let subject = [notification.id, replacedId].compactMap { $0 }.joined(separator: " ")
        let logSeq = try ChangeLog.append(db, .notification, subject, at: now)
        return (logSeq, [.notificationArrived(notification, replacing: replacedId, unreadCount: try unreadCount(db, owner: owner),
                                              shopper: owner)])
    }
}
