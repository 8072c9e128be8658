import Foundation
import Logging
import PostgresNIO
import Shop
import ShopStore

/// Analytics over PostgreSQL: the SQLite store's recorder (`AnalyticsRecorder`: a bounded buffer that
/// ``record(_:)`` appends to without waiting, and a writer task that stores one batch per transaction), with
/// each batch written as one `INSERT … SELECT FROM unnest(…)` of column arrays: one statement with seven
/// binds whatever the batch's size (a statement per event would be a round trip each; a row of binds per
/// event, 50 000 parameters for a batch at the default capacity, close to PostgreSQL's limit of 65 535).
///
/// Analytics take no lock the shop's writes take (not the change log's head: nobody follows analytics), so
/// a batch never holds up a cart change on any server.
final class PostgresAnalyticsService: AnalyticsService, Sendable {
    private let recorder: AnalyticsRecorder
    private let database: PostgresShopDatabase

    /// The service over `database`, with its writer task started.
    /// - Parameters:
    ///   - database: The opened database.
    ///   - capacity: The most events waiting for the writer; more are dropped and counted.
    ///   - clock: The clock the batch window is timed on.
    ///   - batchWindow: How long the writer gathers events before a write (unless flushed).
    ///   - now: The current date, for pruning.
    ///   - logger: Where failed writes are reported.
    init(
        database: PostgresShopDatabase, capacity: Int = AnalyticsRecorder.defaultCapacity, clock: any Clock<Duration>,
        batchWindow: Duration = AnalyticsRecorder.batchWindow, now: @escaping @Sendable () -> Date,
        logger: Logger = Logger(label: "storefront.analytics")
    ) {
        self.database = database
        recorder = AnalyticsRecorder(capacity: capacity, clock: clock, batchWindow: batchWindow, now: now, logger: logger) { batch, pruneBefore in
            try await Self.store(batch, pruneBefore: pruneBefore, in: database)
        }
    }

    /// What became of the events recorded so far.
    var counters: AnalyticsCounters { recorder.counters }

    /// Events recorded and not yet taken by the writer.
    var pendingCount: Int { recorder.pendingCount }

    func record(_ event: AnalyticsEvent) {
        recorder.record(event)
    }

    func flush() async {
        await recorder.flush()
    }

    func trending(since: Date, limit: Int) async throws -> [TrendingProduct] {
        await flush()
        let since = StoredDate.milliseconds(since)
        let (viewed, added) = (AnalyticsEvent.Kind.productViewed.rawValue, AnalyticsEvent.Kind.addedToCart.rawValue)
        return try await database.read { session in
            // Scores per product from the time range of the index, joined with the catalog (a deleted
            // product's events stay until they age out, but it no longer trends). The order is
            // `TrendingProduct.score`, then the name ignoring case in byte order, whatever the database's
            // collation (`COLLATE "C"`), as SQLite's `COLLATE NOCASE` has it.
            try await session.rows("""
                SELECT \(unescaped: PostgresRows.productColumns), t.views, t.cartAdds FROM (
                    SELECT productId, COUNT(*) FILTER (WHERE kind = \(viewed)) AS views, COUNT(*) FILTER (WHERE kind = \(added)) AS cartAdds
                    FROM analytics_event
                    WHERE at >= \(since) AND kind IN (\(viewed), \(added)) AND productId IS NOT NULL
                    GROUP BY productId
                ) t JOIN product p ON p.id = t.productId
                ORDER BY t.views + 3 * t.cartAdds DESC, lower(p.name) COLLATE "C", p.id
                LIMIT \(max(limit, 0))
                """).map { row in
                let columns = row.makeRandomAccess()
                return TrendingProduct(
                    product: try PostgresRows.product(row), views: try columns[9].decode(Int.self), cartAdds: try columns[10].decode(Int.self))
            }
        }
    }

    /// Writes one batch in one statement (and transaction), and deletes the events older than `pruneBefore`
    /// when given.
    ///
    /// postgres-nio binds arrays without nulls, so each nullable column (product, quantity) goes as an array
    /// of values beside an array saying which are present.
    private static func store(_ batch: [AnalyticsEvent], pruneBefore: Date?, in database: PostgresShopDatabase) async throws {
        let at = batch.map { StoredDate.milliseconds($0.at) }
        let kind = batch.map(\.kind.rawValue)
        let productId = batch.map { $0.productId ?? "" }
        let hasProduct = batch.map { $0.productId != nil }
        let quantity = batch.map { Int64($0.quantity ?? 0) }
        let hasQuantity = batch.map { $0.quantity != nil }
        let owner = batch.map(\.shopper.storageKey)
        try await database.write { session in
            try await session.execute("""
                INSERT INTO analytics_event (at, kind, productId, quantity, owner)
                SELECT e.at, e.kind, CASE WHEN e.hasProduct THEN e.productId END, CASE WHEN e.hasQuantity THEN e.quantity END, e.owner
                FROM unnest(\(at)::BIGINT[], \(kind)::TEXT[], \(productId)::TEXT[], \(hasProduct)::BOOLEAN[], \(quantity)::BIGINT[],
                            \(hasQuantity)::BOOLEAN[], \(owner)::TEXT[])
                    WITH ORDINALITY AS e(at, kind, productId, hasProduct, quantity, hasQuantity, owner, position)
                ORDER BY e.position
                """)
            if let pruneBefore {
                try await session.execute("DELETE FROM analytics_event WHERE at < \(StoredDate.milliseconds(pruneBefore))")
            }
        }
    }
}
