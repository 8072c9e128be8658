import Foundation
import GRDB
import Shop

/// Each account's inbox over the shop database (`notification` rows, written by ``InboxRows``' producers).
/// Marking read is one transaction that writes a change-log entry naming the notifications it changed;
/// the change is published on the feed after it commits, so every open inbox of the account, in every
/// server, shows it.
struct LiveNotificationService: NotificationService {
    let database: ShopDatabase
    let feed: ChangeFeed
    let events: ShopEvents
    let now: @Sendable () -> Date

    func inbox(of shopper: Shopper, before: String?, limit: Int) async throws -> InboxPage {
        try InboxChecks.requireAccount(shopper)
        let beforeSeq = try InboxChecks.pageStart(before: before)
        return try await StorageError.mapping {
            try await database.writer.read { db in try InboxRows.page(db, owner: shopper, before: beforeSeq, limit: limit) }
        }
    }

    @discardableResult
    func markRead(ids: [String], of shopper: Shopper) async throws -> Int {
        try InboxChecks.requireAccount(shopper)
        let seqs = Set(ids.compactMap(InboxNotification.seq(of:))).sorted()
        let owner = shopper.storageKey
        let sessionId = WritingSession.id
        let now = now()
        let (unread, changed, logSeq) = try await StorageError.mapping {
            try await database.write { db -> (Int, [String], Int64?) in
                try SessionCheck.requireLive(db, sessionId, at: now)
                var changed: [String] = []
                let update = try db.cachedStatement(sql: "UPDATE notification SET readAt = ? WHERE seq = ? AND owner = ? AND readAt IS NULL")
                for seq in seqs {
                    try update.execute(arguments: [StoredDate.milliseconds(now), seq, owner])
                    if db.changesCount > 0 { changed.append(InboxNotification.id(seq: seq)) }
                }
                if !changed.isEmpty { try InboxRows.markedRead(db, owner: owner, count: changed.count) }
                let unread = try InboxRows.unreadCount(db, owner: shopper)
                guard !changed.isEmpty else { return (unread, [], nil) }
                let subject = ChangeLog.notificationsReadSubject(owner: shopper, ids: changed)
                return (unread, changed, try ChangeLog.append(db, .notificationsRead, subject, at: now))
            }
        }
        if let logSeq { await feed.committed(logSeq, [.notificationsRead(ids: changed, unreadCount: unread, shopper: shopper)]) }
        return unread
    }

    /// Marks every unread notification read. The entry and the event name them (rather than "all"), so
    /// that an inbox that loaded a newer notification while the event was on its way keeps that one unread.
    func markAllRead(of shopper: Shopper) async throws {
        try InboxChecks.requireAccount(shopper)
        let owner = shopper.storageKey
        let sessionId = WritingSession.id
        let now = now()
        let (changed, logSeq) = try await StorageError.mapping {
            try await database.write { db -> ([String], Int64?) in
                try SessionCheck.requireLive(db, sessionId, at: now)
                let seqs = try Int64.fetchAll(db.cachedStatement(sql: "SELECT seq FROM notification WHERE owner = ? AND readAt IS NULL ORDER BY seq"),
                                              arguments: [owner])
                guard !seqs.isEmpty else { return ([], nil) }
                try db.execute(sql: "UPDATE notification SET readAt = ? WHERE owner = ? AND readAt IS NULL",
                               arguments: [StoredDate.milliseconds(now), owner])
                // Every unread one was just marked, in this transaction (one writer at a time on SQLite).
                try InboxRows.allRead(db, owner: owner)
                let ids = seqs.map(InboxNotification.id(seq:))
                let subject = ChangeLog.notificationsReadSubject(owner: shopper, ids: ids)
                return (ids, try ChangeLog.append(db, .notificationsRead, subject, at: now))
            }
        }
        if let logSeq { await feed.committed(logSeq, [.notificationsRead(ids: changed, unreadCount: 0, shopper: shopper)]) }
    }

    @MainActor
    func changes(of shopper: Shopper) -> AsyncStream<InboxChange> {
        events.inboxChanges(of: shopper)
    }
}
