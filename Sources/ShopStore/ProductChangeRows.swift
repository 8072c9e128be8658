import Foundation
import GRDB
import Shop

/// Stores a change of an existing product, in the current transaction: the product row, a price point
/// when its price or stock changed, a new revision of every cart holding it when its price, name or
/// category changed, the change-log entries (the change, its move when its category changed, its coming back
/// in stock when its stock went from 0 to more), and the notifications the change produces.
/// Shared by the catalog's `update` and the market simulation, so every change is stored the same way.
enum ProductChangeRows {
    /// Stores `new` in place of `old` (same id) as of `now`.
    /// - Returns: The change-log entries written, in log order, with the events to publish for each: the
    ///   product change's first, then the notifications'.
    static func store(_ db: Database, from old: Product, to new: Product, at now: Date) throws -> [(seq: Int64, events: [ShopEvent])] {
        let textChanged = ProductText(old) != ProductText(new)
        let textVersion = textChanged ? try SearchPrefixCounts.versions(db).version : 0
        try db.cachedStatement(sql: """
            UPDATE product SET name = ?, description = ?, price = ?, categoryId = ?, stock = ? WHERE id = ?
            """).execute(arguments: [new.name, new.description, new.price.minorUnits, new.categoryId, new.stock, new.id])
        if textChanged {
            // The text as stored, which the index read: `old` was read from the row; `new` is read back.
            try SearchPrefixCounts.textsChanged(db, since: textVersion, [(new.id, ProductText(old), ProductText.stored(db, id: new.id))])
        }
        if old.price != new.price || old.stock != new.stock { try PriceHistoryRows.record(db, new, at: now) }
        if old.categoryId != new.categoryId {
            try CategoryCounts.add(-1, to: old.categoryId, db)
            try CategoryCounts.add(1, to: new.categoryId, db)
        }
        if old.price != new.price || old.categoryId != new.categoryId || old.name != new.name {
            // What a cart holding it shows changed (its price, its tax rate, its name): a checkout of the
            // cart as the shopper saw it before is refused (`cartChanged`) rather than charging what they
            // did not see, and a cart known at the revision before is known to be out of date (`CartCache`).
            try db.cachedStatement(sql: """
                INSERT INTO cart_revision (owner, revision) SELECT DISTINCT owner, 1 FROM cart_line WHERE productId = ?
                ON CONFLICT (owner) DO UPDATE SET revision = revision + 1
                """).execute(arguments: [new.id])
        }
        var entries = [(seq: try ChangeLog.append(db, .productChanged, new.id, at: now), events: [ShopEvent.productChanged(new)])]
        if old.categoryId != new.categoryId {
            let seq = try ChangeLog.append(db, .productMoved, "\(new.id) \(old.categoryId) \(new.categoryId)", at: now)
            entries.append((seq, [.productMoved(productId: new.id, from: old.categoryId, to: new.categoryId)]))
        }
        if old.stock == 0 && new.stock > 0 {
            let seq = try ChangeLog.append(db, .productRestocked, new.id, at: now)
            entries.append((seq, [.productRestocked(productId: new.id)]))
        }
        return entries + (try InboxRows.productChanged(db, from: old, to: new, at: now))
    }
}
