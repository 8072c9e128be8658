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
///
/// Each owner's counts (`inbox`: stored and unread) are written by every write that changes them, in its
/// transaction: a notification's arrival and the unread count are constant-time however full the inbox is.
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
        try counts(db, owner: owner.storageKey).unread
    }

    // The statements of the writes of notifications and of the counts (compiled once per connection and kept:
    // `StatementSQL`).
    private static let countsSQL = StatementSQL("SELECT stored, unread FROM inbox WHERE owner = ?")
    private static let notificationsEnabledSQL = StatementSQL("SELECT notificationsEnabled FROM account WHERE id = ?")
    private static let unreadOfProductSQL = StatementSQL("""
        SELECT seq FROM notification WHERE owner = ? AND kind = ? AND productId = ? AND readAt IS NULL ORDER BY seq DESC LIMIT 1
        """)
    private static let deleteSQL = StatementSQL("DELETE FROM notification WHERE seq = ?")
    private static let insertSQL = StatementSQL("""
        INSERT INTO notification (owner, kind, title, body, productId, orderId, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)
        """)
    private static let oldestSQL = StatementSQL("""
        SELECT seq, readAt IS NULL FROM notification WHERE owner = ? ORDER BY seq LIMIT ?
        """)
    private static let deleteOldestSQL = StatementSQL("DELETE FROM notification WHERE owner = ? AND seq <= ?")
    private static let storeCountsSQL = StatementSQL("""
        INSERT INTO inbox (owner, stored, unread) VALUES (?, ?, ?)
        ON CONFLICT (owner) DO UPDATE SET stored = excluded.stored, unread = excluded.unread
        """)

    /// The counts of the inbox of the owner whose storage key is `owner` (zero before its first notification).
    static func counts(_ db: Database, owner: String) throws -> Counts {
        try DirectStatement(db, Self.countsSQL).one([.text(owner)]) {
            Counts(stored: $0.int(0), unread: $0.int(1))
        } ?? Counts(stored: 0, unread: 0)
    }

    /// Records that every notification of the owner whose storage key is `owner` was marked read.
    static func allRead(_ db: Database, owner: String) throws {
        try db.cachedStatement(sql: "UPDATE inbox SET unread = 0 WHERE owner = ?").execute(arguments: [owner])
    }

    /// Records that `count` of the notifications of the owner whose storage key is `owner` were marked read.
    static func markedRead(_ db: Database, owner: String, count: Int) throws {
        try db.cachedStatement(sql: "UPDATE inbox SET unread = unread - ? WHERE owner = ?").execute(arguments: [count, owner])
    }

    // MARK: Writing

    /// An inbox's counts: notifications stored, and how many of them are unread.
    struct Counts: Equatable {
        var stored: Int
        var unread: Int
    }

    private static func notificationsEnabled(_ db: Database, accountId: Int64) throws -> Bool {
        try DirectStatement(db, Self.notificationsEnabledSQL).one([.integer(accountId)]) { $0.int64(0) != 0 } ?? false
    }

    /// Stores a notification (replacing an unread one of the same kind and product), keeps the inbox
    /// within its bound (deleting its oldest, which its counts say when), updates the counts, and writes
    /// the change-log entry: subject `n-<new>` or `n-<new> n-<replaced>`.
    private static func insert(
        _ db: Database, owner: Shopper, kind: InboxNotification.Kind, title: String, body: String, productId: String?,
        orderId: String?, at now: Date
    ) throws -> (seq: Int64, events: [ShopEvent]) {
        let key = owner.storageKey
        var counts = try counts(db, owner: key)
        var replaced: Int64?
        if let productId, kind != .orderPlaced {
            replaced = try DirectStatement(db, Self.unreadOfProductSQL)
                .one([.text(key), .text(kind.rawValue), .text(productId)]) { $0.int64(0) }
            if let replaced {
                try DirectStatement(db, Self.deleteSQL).execute([.integer(replaced)])
                counts.stored -= 1
                counts.unread -= 1  // Only an unread one is replaced.
            }
        }
        let milliseconds = StoredDate.milliseconds(now)
        try DirectStatement(db, Self.insertSQL).execute([
            .text(key), .text(kind.rawValue), .text(title), .text(body), productId.map { .text($0) } ?? .null,
            orderId.map { .text($0) } ?? .null, .integer(milliseconds),
        ])
        let seq = db.lastInsertedRowID
        counts.stored += 1
        counts.unread += 1
        if counts.stored > maximumPerAccount {
            var oldest: [(seq: Int64, isUnread: Bool)] = []
            try DirectStatement(db, Self.oldestSQL).forEachRow([.text(key), .integer(Int64(counts.stored - maximumPerAccount))]) { row in
                oldest.append((row.int64(0), row.int64(1) != 0))
                return true
            }
            if let last = oldest.last {
                try DirectStatement(db, Self.deleteOldestSQL).execute([.text(key), .integer(last.seq)])
                counts.stored -= oldest.count
                counts.unread -= oldest.count(where: \.isUnread)
            }
        }
        try DirectStatement(db, Self.storeCountsSQL).execute([.text(key), .integer(Int64(counts.stored)), .integer(Int64(counts.unread))])
        let notification = InboxNotification(
            id: InboxNotification.id(seq: seq), kind: kind, title: title, body: body, productId: productId, orderId: orderId,
            createdAt: StoredDate.date(milliseconds), isRead: false)
        let replacedId = replaced.map(InboxNotification.id(seq:))
        let subject = [notification.id, replacedId].compactMap { $0 }.joined(separator: " ")
        let logSeq = try ChangeLog.append(db, .notification, subject, at: now)
        return (logSeq, [.notificationArrived(notification, replacing: replacedId, unreadCount: counts.unread, shopper: owner)])
    }
}
