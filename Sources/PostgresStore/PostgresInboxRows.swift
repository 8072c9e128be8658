import Foundation
import PostgresNIO
import Shop
import ShopStore

/// The inbox's producers and reads on PostgreSQL, with the SQLite store's rules (`InboxRows`): a producer
/// runs in the transaction of the change it is about, only accounts with notifications enabled get any, an
/// unread back-in-stock or price-drop notice for the same product is replaced rather than repeated, and an
/// inbox keeps its newest `InboxRows.maximumPerAccount`, and its counts (`inbox`) are kept by the writes.
///
/// Locks: a writer changes an inbox's counts with or after its change-log entry, whose head lock it then holds
/// to its commit, so the writers of one inbox's counts take their turns in log order (and the count each
/// announces is the count after its change, returned by the update). A producer, holding that lock, deletes
/// notices (the oldest beyond the bound, an unread one it replaces) only among those no other transaction has
/// locked (`SKIP LOCKED`): a marking read locks the notices it marks before it waits for the head's lock, and
/// waiting for them would close a cycle that holds up every writer. A notice skipped so stays (the bound is
/// passed by one until the next notice; a replaced one is kept beside its successor, read by then); the counts
/// change by the rows really deleted, so they stay exact.
enum PostgresInboxRows {
    /// Change-log entries written, in log order, with the events to publish for each.
    typealias Entries = [(seq: Int64, events: [ShopEvent])]

    /// The column of an entry's statement that gives the unread count after its notice's change of the counts
    /// (the `inbox_counts` of ``orderPlaced(order:owner:seq:at:in:)`` and ``Staged/countChange(in:)``).
    static let unreadAfter = "(SELECT unread FROM inbox_counts)"

    /// The columns ``notification(_:)`` decodes, in order.
    static let columns = "seq, kind, title, body, productId, orderId, createdAt, readAt"

    /// Adds the notice of the order `owner` just placed to `statement`, the checkout's, numbered `seq` (taken
    /// with the checkout's read): the notice, the inbox's bound and its counts, as `WITH` queries that run once
    /// the statement holds the change log's head lock, as every producer's writes do (so the prunes of one inbox
    /// take turns, and the counts change in log order). Returns the notice: the checkout appends its entry (subject
    /// its id) with its own, and the statement returns the unread count after it (``unreadAfter``).
    ///
    /// The bound is read in the statement's snapshot, taken before it waited for the head's lock: a notice of
    /// the same inbox committed meanwhile is not counted, and the inbox may then pass its bound by one until its
    /// next notice. The counts stay exact: they change by the rows the prune really deleted.
    static func orderPlaced(
        order: Order, owner: Shopper, seq: Int64, at now: Date, in statement: inout PostgresStatement
    ) throws -> InboxNotification {
        let notice = InboxNotices.orderPlaced(order)
        let milliseconds = StoredDate.milliseconds(now)
        let key = try statement.bind(owner.storageKey)
        let values = [
            try statement.bind(seq), key, try statement.bind(InboxNotification.Kind.orderPlaced.rawValue), try statement.bind(notice.title),
            try statement.bind(notice.body), try statement.bind(order.id), try statement.bind(milliseconds),
        ]
        statement.with("""
            noticed AS (INSERT INTO notification (seq, owner, kind, title, body, orderId, createdAt) VALUES (\(values.joined(separator: ", "))))
            """)
        try prune(owner: key, adding: 1, in: &statement)
        countChange(
            owner: key, stored: "1 - (SELECT COUNT(*) FROM pruned)", unread: "1 - (SELECT COUNT(*) FROM pruned WHERE unread)", in: &statement)
        return InboxNotification(
            id: InboxNotification.id(seq: seq), kind: .orderPlaced, title: notice.title, body: notice.body, productId: nil, orderId: order.id,
            createdAt: StoredDate.date(milliseconds), isRead: false)
    }

    /// Notifies every account that favourited the product (and enabled notifications) that it came back in
    /// stock or got cheaper (in the product update's transaction).
    static func productChanged(_ session: PostgresSession, from old: Product, to new: Product, at now: Date) async throws -> Entries {
        let notices = InboxNotices.productChanged(from: old, to: new)
        guard !notices.isEmpty else { return [] }
        let owners = try await session.rows("""
            SELECT f.owner FROM favorite f JOIN account a ON f.owner = 'a:' || a.id
            WHERE f.productId = \(new.id) AND a.notificationsEnabled ORDER BY a.id
            """).compactMap { Shopper(storageKey: try $0.decode(String.self)) }
        var entries: Entries = []
        for owner in owners {
            for notice in notices {
                entries.append(try await insert(session, owner: owner, kind: notice.kind, title: notice.title, body: notice.body,
                                                productId: new.id, orderId: nil, at: now))
            }
        }
        return entries
    }

    /// A notification from a row selected with ``columns``.
    static func notification(_ row: PostgresRow) throws -> InboxNotification {
        let (seq, kind, title, body, productId, orderId, createdAt, readAt) =
            try row.decode((Int64, String, String, String, String?, String?, Int64, Int64?).self)
        return InboxNotification(
            id: InboxNotification.id(seq: seq), kind: InboxNotification.Kind(rawValue: kind) ?? .orderPlaced, title: title, body: body,
            productId: productId, orderId: orderId, createdAt: StoredDate.date(createdAt), isRead: readAt != nil)
    }

    /// One notification, its owner and the owner's unread count, or nil: one statement.
    static func notification(
        _ session: PostgresSession, seq: Int64
    ) async throws -> (notification: InboxNotification, owner: Shopper, unreadCount: Int)? {
        guard let row = try await session.first(NotificationRead(seq: seq)) else { return nil }
        let columns = row.makeRandomAccess()
        guard let owner = Shopper(storageKey: try columns[8].decode(String.self)) else { return nil }
        return (try notification(row), owner, try columns[9].decode(Int.self))
    }

    /// The read of ``notification(_:seq:)``, prepared: a follower's read of each notification.
    private struct NotificationRead: PostgresPreparedQuery {
        static let name = "storefront_notification"
        static let sql = """
            SELECT \(PostgresInboxRows.columns), owner, COALESCE((SELECT unread FROM inbox i WHERE i.owner = n.owner), 0)
            FROM notification n WHERE seq = $1
            """
        let seq: Int64
        func makeBindings() throws -> PostgresBindings { try .values(seq) }
    }

    /// A page of `owner`'s inbox, newest first.
    static func page(_ session: PostgresSession, owner: Shopper, before: Int64?, limit: Int) async throws -> InboxPage {
        let limit = max(limit, 0)
        let rows = try await session.rows("""
            SELECT \(unescaped: columns) FROM notification WHERE owner = \(owner.storageKey) AND seq < \(before ?? .max)
            ORDER BY seq DESC LIMIT \(limit + 1)
            """)
        return InboxPage(items: try rows.prefix(limit).map(notification), unreadCount: try await unreadCount(session, owner: owner),
                         hasMore: rows.count > limit)
    }

    /// How many of `owner`'s notifications are unread.
    static func unreadCount(_ session: PostgresSession, owner: Shopper) async throws -> Int {
        try await session.value("SELECT unread FROM inbox WHERE owner = \(owner.storageKey)", as: Int.self) ?? 0
    }

    /// Records that `count` (more than none) of `owner`'s notifications were marked read; returns the
    /// unread count after it. Call after the change-log entry (see the locks above).
    static func markedRead(_ session: PostgresSession, owner: Shopper, count: Int) async throws -> Int {
        try await session.value("""
            UPDATE inbox SET unread = unread - \(count) WHERE owner = \(owner.storageKey) RETURNING unread
            """, as: Int.self) ?? 0
    }

    /// Adds a `WITH` query named `pruned` to `statement`: it deletes the oldest notices of the inbox of `owner` (a
    /// placeholder) beyond its bound once `adding` more are in (new ones less those replaced), skipping notices
    /// another transaction has locked (see the type's notes), and returns whether each deleted one was unread.
    /// The stored count is read from the inbox's counts as the statement sees them: not the new notice's.
    private static func prune(owner: String, adding: Int, in statement: inout PostgresStatement) throws {
        let excess = try statement.bind(Int64(adding - InboxRows.maximumPerAccount))
        statement.with("""
            pruned AS (DELETE FROM notification WHERE seq IN (
                           SELECT seq FROM notification WHERE owner = \(owner) ORDER BY seq
                           LIMIT GREATEST(0, COALESCE((SELECT stored FROM inbox WHERE owner = \(owner)), 0) + \(excess))
                           FOR UPDATE SKIP LOCKED)
                       RETURNING readAt IS NULL AS unread)
            """)
    }

    /// Adds a `WITH` query named `inbox_counts` to `statement`: the inbox of `owner` (a placeholder) changes its
    /// stored and unread counts by `stored` and `unread` (expressions of the statement), returning the unread count
    /// after it. Without a row the inbox held nothing, and now holds the one notice a producer adds. (PostgreSQL
    /// checks the row proposed for insertion even when it then updates instead: it must be valid on its own.)
    private static func countChange(owner: String, stored: String, unread: String, in statement: inout PostgresStatement) {
        statement.with("""
            inbox_counts AS (INSERT INTO inbox AS i (owner, stored, unread) VALUES (\(owner), 1, 1)
                             ON CONFLICT (owner) DO UPDATE SET stored = i.stored + \(stored), unread = i.unread + \(unread)
                             RETURNING unread)
            """)
    }

    /// A notification stored, whose change-log entry and change of its inbox's counts are still to be written
    /// (``log(_:at:)``).
    struct Staged {
        let notification: InboxNotification
        let owner: Shopper
        /// The notification it replaced, if any.
        let replacedId: String?
        /// How the inbox's stored and unread counts change.
        let storedChange: Int
        let unreadChange: Int

        /// The subject of its change-log entry: `n-<new>`, or `n-<new> n-<replaced>`.
        var subject: String { [notification.id, replacedId].compactMap { $0 }.joined(separator: " ") }

        /// Adds the change of the inbox's counts to `statement` (``PostgresInboxRows/countChange(owner:stored:unread:in:)``,
        /// with the entry's statement: the log's head lock is held when it is made).
        func countChange(in statement: inout PostgresStatement) throws {
            let (owner, stored, unread) =
                (try statement.bind(self.owner.storageKey), try statement.bind(Int64(storedChange)), try statement.bind(Int64(unreadChange)))
            PostgresInboxRows.countChange(owner: owner, stored: stored, unread: unread, in: &statement)
        }

        /// The event of the notification, with its owner's unread count after it.
        func event(unreadCount: Int) -> ShopEvent {
            .notificationArrived(notification, replacing: replacedId, unreadCount: unreadCount, shopper: owner)
        }

        /// Writes the notification's change-log entry and its inbox's counts, in one statement.
        func log(_ session: PostgresSession, at now: Date) async throws -> (seq: Int64, events: [ShopEvent]) {
            var statement = PostgresStatement()
            try countChange(in: &statement)
            let (seqs, unread) = try await PostgresChangeLog.append(
                session, [(.notification, subject)], at: now, after: statement, returning: PostgresInboxRows.unreadAfter, as: Int.self)
            return (seqs[0], [event(unreadCount: unread)])
        }
    }

    /// Stores a notification, writes its change-log entry and updates its inbox's counts (see ``stage``): the
    /// entry and the counts in one statement.
    private static func insert(
        _ session: PostgresSession, owner: Shopper, kind: InboxNotification.Kind, title: String, body: String, productId: String?,
        orderId: String?, at now: Date
    ) async throws -> (seq: Int64, events: [ShopEvent]) {
        try await stage(session, owner: owner, kind: kind, title: title, body: body, productId: productId, orderId: orderId, at: now)
            .log(session, at: now)
    }

    /// Stores a notification (replacing an unread one of the same kind and product) and keeps the inbox within
    /// its bound (deleting its oldest, which its counts say when): the notification and the bound in one
    /// statement.
    ///
    /// The producer runs after its transaction's first change-log entry, so one account's notifications are
    /// stored one transaction at a time and the count read for the bound is exact (but for a checkout's notice
    /// committed meanwhile: see ``orderPlaced(order:owner:seq:at:in:)``). The counts stay exact: they change by
    /// the rows each statement really deleted (a replaced notice that another server marked read meanwhile is
    /// not deleted: the outer `readAt IS NULL` is checked again on the locked row).
    private static func stage(
        _ session: PostgresSession, owner: Shopper, kind: InboxNotification.Kind, title: String, body: String, productId: String?,
        orderId: String?, at now: Date
    ) async throws -> Staged {
        let key = owner.storageKey
        var replaced: Int64?
        if let productId, kind != .orderPlaced {
            replaced = try await session.value("""
                DELETE FROM notification WHERE seq = (
                    SELECT seq FROM notification WHERE owner = \(key) AND kind = \(kind.rawValue) AND productId = \(productId)
                      AND readAt IS NULL ORDER BY seq DESC LIMIT 1 FOR UPDATE SKIP LOCKED)
                  AND readAt IS NULL
                RETURNING seq
                """, as: Int64.self)
        }
        let milliseconds = StoredDate.milliseconds(now)
        let replacedCount = replaced == nil ? 0 : 1
        var statement = PostgresStatement()
        let ownerValue = try statement.bind(key)
        let values = [
            ownerValue, try statement.bind(kind.rawValue), try statement.bind(title), try statement.bind(body), try statement.bind(productId),
            try statement.bind(orderId), try statement.bind(milliseconds),
        ]
        statement.with("""
            added AS (INSERT INTO notification (owner, kind, title, body, productId, orderId, createdAt) VALUES (\(values.joined(separator: ", ")))
                      RETURNING seq)
            """)
        try prune(owner: ownerValue, adding: 1 - replacedCount, in: &statement)
        guard let row = try await session.first(statement.query("""
            SELECT (SELECT seq FROM added), (SELECT COUNT(*) FROM pruned), (SELECT COUNT(*) FROM pruned WHERE unread)
            """))
        else { throw ShopError(reason: ShopError.Reason.storageFailed, message: "The notification was not stored.") }
        let (seq, prunedCount, prunedUnread) = try row.decode((Int64, Int, Int).self)
        let notification = InboxNotification(
            id: InboxNotification.id(seq: seq), kind: kind, title: title, body: body, productId: productId, orderId: orderId,
            createdAt: StoredDate.date(milliseconds), isRead: false)
        return Staged(
            notification: notification, owner: owner, replacedId: replaced.map(InboxNotification.id(seq:)),
            storedChange: 1 - replacedCount - prunedCount, unreadChange: 1 - replacedCount - prunedUnread)
    }
}
