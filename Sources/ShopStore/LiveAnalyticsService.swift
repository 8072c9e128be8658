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
/// - Batches: woken by a first event, the writer gathers events for ``batchWindow`` (on the injected
///   clock) before it writes them in one transaction; a flush, or a half-full buffer, ends the window at
///   once. Analytics then cost the database one durable commit a second at most, not one per action: the
///   shop's writes (carts, orders) share the one SQLite writer and its log sync, and an analytics commit per
///   action made one-at-a-time cart changes ~20 % slower.
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
    /// How long the writer gathers events before a write, unless flushed: 1 second.
    public static let batchWindow = Duration.seconds(1)

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
    ///   - clock: The clock the batch window is timed on.
    ///   - batchWindow: How long the writer gathers events before a write (unless flushed).
    ///   - now: The current date, for pruning.
    ///   - logger: Where failed writes are reported.
    public init(
        database: ShopDatabase, capacity: Int = defaultCapacity, clock: any Clock<Duration> = ContinuousClock(),
        batchWindow: Duration = batchWindow, now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "storefront.analytics")
    ) {
        let buffer = Locked(Buffer())
        self.capacity = capacity
        self.buffer = buffer
        self.database = database
        let window = BatchWindow(clock: clock, duration: batchWindow, earlyAt: max(1, capacity / 2))
        writer = Task.detached(priority: .utility) {
            await Self.write(buffer, to: database, window: window, now: now, logger: logger)
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
            if let idle = buffer.idleWriter {
                buffer.idleWriter = nil
                return idle
            }
            // Half full: the window ends now rather than drop events.
            guard buffer.pending.count >= max(1, capacity / 2) else { return nil }
            return buffer.takeGatheringWriter()
        }
        idleWriter?.resume()
    }

    public func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = buffer.withLock { buffer -> (Bool, CheckedContinuation<Void, Never>?) in
                let target = buffer.counters.recorded
                if buffer.finished >= target { return (true, nil) }
                buffer.flushWaiters.append((target, continuation))
                // The writer writes what it gathers now, not at the end of its window.
                return (false, buffer.takeGatheringWriter())
            }
            if done.0 { continuation.resume() }
            done.1?.resume()
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
        /// The writer, while it gathers events for a batch, with the number of its window (so that a late
        /// timer cannot end a later window).
        var gatheringWriter: (window: Int, continuation: CheckedContinuation<Void, Never>)?
        /// Windows opened so far.
        var windows = 0
        /// The sleep that ends the open window; cancelled when something else ends it first.
        var windowTimer: Task<Void, Never>?
        /// Whether the writer was cancelled.
        var isCancelled = false
        /// Callers of ``flush()``, with the count of recorded events they wait for.
        var flushWaiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// Ends the writer's window, if it is gathering: the continuation to resume.
        mutating func takeGatheringWriter() -> CheckedContinuation<Void, Never>? {
            windowTimer?.cancel()
            windowTimer = nil
            defer { gatheringWriter = nil }
            return gatheringWriter?.continuation
        }
    }

    /// How long the writer gathers a batch.
    private struct BatchWindow: Sendable {
        var clock: any Clock<Duration>
        var duration: Duration
        /// Pending events that end a window early.
        var earlyAt: Int
    }

    /// The writer's loop: takes what is pending, stores it in one transaction, says so to the flushes it
    /// completes, and waits for more; returns when cancelled.
    private static func write(
        _ buffer: Locked<Buffer>, to database: ShopDatabase, window: BatchWindow, now: @escaping @Sendable () -> Date,
        logger: Logger
    ) async {
        var lastPrune: Date?
        var failing = false
        while let batch = await nextBatch(buffer, window: window) {
            let date = now()
            let prunes = lastPrune.map { date.timeIntervalSince($0) >= pruneInterval } ?? true
            do {
                try await database.write { db in
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

    /// The pending events once there are some and their batch window has passed (taking them out of the
    /// buffer), or nil once cancelled.
    private static func nextBatch(_ buffer: Locked<Buffer>, window: BatchWindow) async -> [AnalyticsEvent]? {
        while true {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = buffer.withLock { buffer in
                        if buffer.isCancelled || !buffer.pending.isEmpty { return true }
                        buffer.idleWriter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
                await gather(buffer, window: window)
            } onCancel: {
                let waiting = buffer.withLock { buffer in
                    buffer.isCancelled = true
                    defer { buffer.idleWriter = nil }
                    return [buffer.idleWriter, buffer.takeGatheringWriter()]
                }
                for writer in waiting { writer?.resume() }
            }
            let (batch, cancelled) = buffer.withLock { buffer -> ([AnalyticsEvent]?, Bool) in
                guard !buffer.isCancelled, !buffer.pending.isEmpty else { return (nil, buffer.isCancelled) }
                let batch = buffer.pending
                // Room for as many as this batch had, so that callers of `record` do not pay for the array's
                // growth (copying thousands of events in one append) in the next window.
                buffer.pending = []
                buffer.pending.reserveCapacity(max(256, batch.count))
                return (batch, false)
            }
            if cancelled { return nil }
            if let batch { return batch }
        }
    }

    /// Waits out the batch window that a first event opened, unless a flush, a half-full buffer or a
    /// cancellation ends it first.
    private static func gather(_ buffer: Locked<Buffer>, window: BatchWindow) async {
        guard window.duration > .zero else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let number = buffer.withLock { buffer -> Int? in
                if buffer.isCancelled || !buffer.flushWaiters.isEmpty || buffer.pending.count >= window.earlyAt { return nil }
                buffer.windows += 1
                buffer.gatheringWriter = (buffer.windows, continuation)
                return buffer.windows
            }
            guard let number else { return continuation.resume() }
            let timer = Task.detached(priority: .utility) {
                guard (try? await window.clock.sleep(for: window.duration)) != nil else { return }
                let ended = buffer.withLock { buffer -> CheckedContinuation<Void, Never>? in
                    guard buffer.gatheringWriter?.window == number else { return nil }
                    return buffer.takeGatheringWriter()
                }
                ended?.resume()
            }
            // Kept so that a window ended early (a flush, a half-full buffer, cancellation) stops its sleep;
            // one already ended stops it now.
            buffer.withLock { buffer in
                if buffer.gatheringWriter?.window == number { buffer.windowTimer = timer } else { timer.cancel() }
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
