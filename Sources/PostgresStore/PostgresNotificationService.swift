import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Each account's inbox over PostgreSQL (`notification` rows, written by ``PostgresInboxRows``' producers),
/// with the SQLite store's rules (`LiveNotificationService`). Marking read is one transaction that writes a
/// change-log entry naming the notifications it changed; the change is published on the feed after it
/// commits, so every open inbox of the account, in every server, shows it.
///
/// Two servers marking the same notification read at once: the second's `UPDATE` waits for the first's row
/// lock, then finds it read and leaves it out, so each notification is announced read once.
struct PostgresNotificationService: NotificationService {
    let database: PostgresShopDatabase
    let feed: ChangeFeed
    let events: ShopEvents
    let now: @Sendable () -> Date

    func inbox(of shopper: Shopper, before: String?, limit: Int) async throws -> InboxPage {
        try InboxChecks.requireAccount(shopper)
        let beforeSeq = try InboxChecks.pageStart(before: before)
        // One snapshot: the unread count belongs to the page it comes with.
        return try await database.snapshot { session in
            try await PostgresInboxRows.page(session, owner: shopper, before: beforeSeq, limit: limit)
        }
    }

    @discardableResult
    func markRead(ids: [String], of shopper: Shopper) async throws -> Int {
        try InboxChecks.requireAccount(shopper)
        return try await markRead(shopper, only: Array(Set(ids.compactMap(InboxNotification.seq(of:)))))
    }

    /// Marks every unread notification read. The entry and the event name them (rather than "all"), so
    /// that an inbox that loaded a newer notification while the event was on its way keeps that one unread.
    func markAllRead(of shopper: Shopper) async throws {
        try InboxChecks.requireAccount(shopper)
        try await markRead(shopper, only: nil)
    }

    @MainActor
    func changes(of shopper: Shopper) -> AsyncStream<InboxChange> {
        events.inboxChanges(of: shopper)
    }

    /// Marks `shopper`'s unread notifications numbered `seqs` (nil: all of them) read, in one statement;
    /// logs and publishes the ones it changed, oldest first. Returns the unread count after the change.
    @discardableResult
    private func markRead(_ shopper: Shopper, only seqs: [Int64]?) async throws -> Int {
        let owner = shopper.storageKey
        let sessionId = WritingSession.id
        let now = now()
        let (unread, changed, logSeq) = try await database.write { session -> (Int, [String], Int64?) in
            try await PostgresSessionCheck.requireLive(session, sessionId, at: now)
            let changed = try await session.rows("""
                UPDATE notification SET readAt = \(StoredDate.milliseconds(now))
                WHERE owner = \(owner) AND readAt IS NULL AND (\(seqs == nil) OR seq = ANY(\(seqs ?? [])))
                RETURNING seq
                """).map { try $0.decode(Int64.self) }.sorted().map(InboxNotification.id(seq:))
            guard !changed.isEmpty else { return (try await PostgresInboxRows.unreadCount(session, owner: shopper), [], nil) }
            let subject = ChangeLog.notificationsReadSubject(owner: shopper, ids: changed)
            let logSeq = try await PostgresChangeLog.append(session, .notificationsRead, subject, at: now)
            // Counted after the entry, whose head lock is held from there to the commit: a notification that
            // another server stores meanwhile either committed first (its entry is earlier in the log, and it
            // is counted here) or commits after this one (its own entry then brings its count).
            return (try await PostgresInboxRows.markedRead(session, owner: shopper, count: changed.count), changed, logSeq)
        }
        if let logSeq { await feed.committed(logSeq, [.notificationsRead(ids: changed, unreadCount: unread, shopper: shopper)]) }
        return unread
    }
}
