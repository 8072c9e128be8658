import Foundation
import GRDB
import Shop

/// Stores a change of an existing product, in the current transaction: the product row, a price point
/// when its price or stock changed, the change-log entry, and the notifications the change produces.
/// Shared by the catalog's `update` and the market simulation, so every change is stored the same way.
enum ProductChangeRows {
    /// Stores `new` in place of `old` (same id) as of `now`.
    /// - Returns: The change-log entries written, in log order, with the events to publish for each: the
    ///   product change's first, then the notifications'.
    static func store(_ db: Database, from old: Product, to new: Product, at now: Date) throws -> [(seq: Int64, events: [ShopEvent])] {
        try db.cachedStatement(sql: """
            UPDATE product SET name = ?, description = ?, price = ?, categoryId = ?, stock = ? WHERE id = ?
            """).execute(arguments: [new.name, new.description, new.price.minorUnits, new.categoryId, new.stock, new.id])
        if old.price != new.price || old.stock != new.stock { try PriceHistoryRows.record(db, new, at: now) }
        let seq = try ChangeLog.append(db, .productChanged, new.id, at: now)
        return [(seq, [.productChanged(new)])] + (try InboxRows.productChanged(db, from: old, to: new, at: now))
    }
}
