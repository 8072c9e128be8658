import Foundation
import GRDB
import Logging
import Shop

/// Analytics over the shop database: ``record(_:)`` appends to a bounded in-memory buffer under a lock and
/// wakes a writer task, which stores what has gathered in one transaction per batch, off the caller's path.
///
/// - Recording costs the caller a lock and an append (and, when the writer is idle, resuming it): no
///   allocation beyond the buffer's growth, no I/O, no waiting. A full buffer (``capacity`` events waiting
///   while a write is slow) drops the event and counts it in ``Counters/dropped``.
/// - Batches form by themselves: while one batch is being written, the events recorded meanwhile gather
///   for the next, so there is at most one analytics transaction in flight and a burst of events costs a
///   few transactions, not one each.
/// - A failed write is logged to stderr (once per run of failures) and counted in ``Counters/failed``; the
///   events are lost, nothing is retried and no action ever hears of it.
/// - Events older than ``retention`` are deleted by the writer, in its first batch and then at most once
///   per ``pruneInterval``.
/// - ``trending(since:limit:)`` flushes first, so it includes every event recorded before it was called.
///
/// The writer task holds the buffer, not the service: releasing the service cancels it (events still
/// buffered then are lost; a server calls ``flush()`` before it exits).
public final class LiveAnalyticsService: AnalyticsService, Sendable {
    /// Events kept waiting for the writer by default before new ones are dropped.
    public static let defaultCapacity = 10_000
    /// How long events are kept: 7 days.
    public static let retention: TimeInterval = 7 * 24 * 60 * 60
    /// The least time between two prunes: 1 hour.
    public static let pruneInterval: TimeInterval = 60 * 60

    /// What became of the events recorded so far.
    public struct Counters: Equatable, Sendable {
        /// Events taken into the buffer.
        public var recorded = 0
        /// Events refused because the buffer was full.
        public var dropped = 0
        /// Events stored.
        public var stored = 0
        /// Events whose write failed.
        public var failed = 0
    }

    /// The most events waiting for the writer.
    public let capacity: Int
    private let buffer: Locked<Buffer>
    private let database: ShopDatabase
    private let writer: Task<Void, Never>

    /// The service over `database`, with its writer task started.
    /// - Parameters:
    ///   - database: The opened database.
    ///   - capacity: The most events waiting for the writer; more are dropped and counted.
    ///   - now: The current date, for pruning.
    ///   - logger: Where failed writes are reported.
    public init(
        database: ShopDatabase, capacity: Int = defaultCapacity, now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "storefront.analytics")
    ) {
        let buffer = Locked(Buffer())
        self.capacity = capacity
        self.buffer = buffer
        self.database = database
        writer = Task.detached(priority: .utility) {
            await Self.write(buffer, to: database, now: now, logger: logger)
        }
    }

    deinit {
        writer.cancel()
    }

    /// What became of the events recorded so far.
    public var counters: Counters { buffer.withLock { $0.counters } }

    /// Events recorded and not yet taken by the writer.
    var pendingCount: Int { buffer.withLock { $0.pending.count } }

    public func record(_ event: AnalyticsEvent) {
        let idleWriter = buffer.withLock { buffer -> CheckedContinuation<Void, Never>? in
            guard buffer.pending.count < capacity else {
                buffer.counters.dropped += 1
                return nil
            }
            buffer.pending.append(event)
            buffer.counters.recorded += 1
            defer { buffer.idleWriter = nil }
            return buffer.idleWriter
        }
        idleWriter?.resume()
    }

    public func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = buffer.withLock { buffer in
                let target = buffer.counters.recorded
                if buffer.finished >= target { return true }
                buffer.flushWaiters.append((target, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    public func trending(since: Date, limit: Int) async throws -> [TrendingProduct] {
        await flush()
        let since = StoredDate.milliseconds(since)
        let limit = max(limit, 0)
        return try await StorageError.mapping {
            try await database.writer.read { db in
                // Scores per product from the time range of the index, joined with the catalog (a deleted
                // product's events stay until they age out, but it no longer trends).
                try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT \(StoredRows.productColumns), t.views, t.cartAdds FROM (
                        SELECT productId, SUM(kind = 'productViewed') AS views, SUM(kind = 'addedToCart') AS cartAdds
                        FROM analytics_event
                        WHERE at >= ?1 AND kind IN ('productViewed', 'addedToCart') AND productId IS NOT NULL
                        GROUP BY productId
                    ) t JOIN product p ON p.id = t.productId
                    ORDER BY t.views + 3 * t.cartAdds DESC, p.name COLLATE NOCASE, p.id
                    LIMIT ?2
                    """), arguments: [since, limit]
                ).map { row in
                    TrendingProduct(product: StoredRows.product(row), views: row[9], cartAdds: row[10])
                }
            }
        }
    }

    // MARK: The writer

    /// The state the callers and the writer share.
    private struct Buffer {
        /// Recorded, not yet taken by the writer.
        var pending: [AnalyticsEvent] = []
        var counters = Counters()
        /// Recorded events stored or failed (the first `finished` recorded events are done with).
        var finished = 0
        /// The writer, while it waits for events.
        var idleWriter: CheckedContinuation<Void, Never>?
        /// Whether the writer was cancelled.
        var isCancelled = false
        /// Callers of ``flush()``, with the count of recorded events they wait for.
        var flushWaiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    /// The writer's loop: takes what is pending, stores it in one transaction, says so to the flushes it
    /// completes, and waits for more; returns when cancelled.
    private static func write(_ buffer: Locked<Buffer>, to database: ShopDatabase, now: @escaping @Sendable () -> Date, logger: Logger) async {
        var lastPrune: Date?
        var failing = false
        while let batch = await nextBatch(buffer) {
            let date = now()
            let prunes = lastPrune.map { date.timeIntervalSince($0) >= pruneInterval } ?? true
            do {
                try await database.writer.write { db in
                    let insert = try db.cachedStatement(sql: """
                        INSERT INTO analytics_event (at, kind, productId, quantity, owner) VALUES (?, ?, ?, ?, ?)
                        """)
                    for event in batch {
                        try insert.execute(arguments: [
                            StoredDate.milliseconds(event.at), event.kind.rawValue, event.productId, event.quantity,
                            event.shopper.storageKey,
                        ])
                    }
                    if prunes {
                        try db.execute(
                            sql: "DELETE FROM analytics_event WHERE at < ?",
                            arguments: [StoredDate.milliseconds(date.addingTimeInterval(-retention))])
                    }
                }
                if prunes { lastPrune = date }
                if failing {
                    failing = false
                    logger.notice("analytics events are stored again")
                }
                finish(batch.count, stored: true, in: buffer)
            } catch {
                if !failing {
                    failing = true
                    logger.warning(
                        "could not store analytics events; they are dropped until writes succeed again",
                        metadata: ["events": "\(batch.count)", "error": "\(error)"])
                }
                finish(batch.count, stored: false, in: buffer)
            }
        }
    }

    /// The pending events once there are some (taking them out of the buffer), or nil once cancelled.
    private static func nextBatch(_ buffer: Locked<Buffer>) async -> [AnalyticsEvent]? {
        while true {
            let batch = buffer.withLock { buffer -> [AnalyticsEvent]? in
                guard !buffer.isCancelled, !buffer.pending.isEmpty else { return nil }
                defer { buffer.pending = [] }
                return buffer.pending
            }
            if let batch { return batch }
            if buffer.withLock({ $0.isCancelled }) { return nil }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = buffer.withLock { buffer in
                        if buffer.isCancelled || !buffer.pending.isEmpty { return true }
                        buffer.idleWriter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                let waiting = buffer.withLock { buffer in
                    buffer.isCancelled = true
                    defer { buffer.idleWriter = nil }
                    return buffer.idleWriter
                }
                waiting?.resume()
            }
        }
    }

    /// Counts `count` events as stored or failed, and resumes the flushes that waited for them.
    private static func finish(_ count: Int, stored: Bool, in buffer: Locked<Buffer>) {
        let completed = buffer.withLock { buffer in
            if stored { buffer.counters.stored += count } else { buffer.counters.failed += count }
            buffer.finished += count
            let finished = buffer.finished
            let completed = buffer.flushWaiters.filter { $0.target <= finished }.map(\.continuation)
            buffer.flushWaiters.removeAll { $0.target <= finished }
            return completed
        }
        for continuation in completed { continuation.resume() }
    }
}
