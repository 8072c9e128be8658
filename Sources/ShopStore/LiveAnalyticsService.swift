import Foundation
import GRDB
import Logging
import Shop

/// Analytics over the shop database: events are batched by an ``AnalyticsRecorder`` (a bounded buffer
/// that ``record(_:)`` appends to under a lock, and a writer task that stores what has gathered in one
/// transaction per batch, off the caller's path).
///
/// - Recording never waits and never fails an action; a full buffer drops the event and counts it in
///   ``Counters/dropped``, a failed write counts its events in ``Counters/failed``.
/// - Batches: the writer gathers events for ``batchWindow`` before it writes them in one transaction.
///   Analytics then cost the database one durable commit a second at most, not one per action: the shop's
///   writes (carts, orders) share the one SQLite writer and its log sync, and an analytics commit per
///   action made one-at-a-time cart changes ~20 % slower.
/// - Events older than ``retention`` are deleted by the writer, in its first batch and then at most once
///   per ``pruneInterval``.
/// - ``trending(since:limit:)`` flushes first, so it includes every event recorded before it was called.
///
/// Releasing the service cancels its writer (events still buffered then are lost; a server calls
/// ``flush()`` before it exits).
public final class LiveAnalyticsService: AnalyticsService, Sendable {
    /// Events kept waiting for the writer by default before new ones are dropped.
    public static let defaultCapacity = AnalyticsRecorder.defaultCapacity
    /// How long events are kept: 7 days.
    public static let retention = AnalyticsRecorder.retention
    /// The least time between two prunes: 1 hour.
    public static let pruneInterval = AnalyticsRecorder.pruneInterval
    /// How long the writer gathers events before a write, unless flushed: 1 second.
    public static let batchWindow = AnalyticsRecorder.batchWindow

    /// What became of the events recorded so far.
    public typealias Counters = AnalyticsCounters

    /// The most events waiting for the writer.
    public var capacity: Int { recorder.capacity }
    private let recorder: AnalyticsRecorder
    private let database: ShopDatabase

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
        self.database = database
        recorder = AnalyticsRecorder(capacity: capacity, clock: clock, batchWindow: batchWindow, now: now, logger: logger) { batch, pruneBefore in
            try await Self.store(batch, pruneBefore: pruneBefore, in: database)
        }
    }

    /// What became of the events recorded so far.
    public var counters: Counters { recorder.counters }

    /// Events recorded and not yet taken by the writer.
    var pendingCount: Int { recorder.pendingCount }

    public func record(_ event: AnalyticsEvent) {
        recorder.record(event)
    }

    public func flush() async {
        await recorder.flush()
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

    private static let insertSQL = StatementSQL("""
        INSERT INTO analytics_event (at, kind, productId, quantity, owner) VALUES (?, ?, ?, ?, ?)
        """)

    /// Writes one batch in one transaction, and deletes the events older than `pruneBefore` when given.
    private static func store(_ batch: [AnalyticsEvent], pruneBefore: Date?, in database: ShopDatabase) async throws {
        try await database.write { db in
            // Bound straight on SQLite: GRDB's arguments cost three times the insert itself (callgrind: 18k
            // instructions per event, one event per cart change, on the writer beside the main thread).
            let insert = try DirectStatement(db, Self.insertSQL)
            for event in batch {
                try insert.execute([
                    .integer(StoredDate.milliseconds(event.at)), .text(event.kind.rawValue), event.productId.map { .text($0) } ?? .null,
                    event.quantity.map { .integer(Int64($0)) } ?? .null, .text(event.shopper.storageKey),
                ])
            }
            if let pruneBefore {
                try db.execute(sql: "DELETE FROM analytics_event WHERE at < ?", arguments: [StoredDate.milliseconds(pruneBefore)])
            }
        }
    }
}
