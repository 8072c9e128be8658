import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Stores a change of an existing product in the current transaction, as the SQLite store's
/// `ProductChangeRows` does: the product row, a price point when its price or stock changed, a new
/// revision of every cart holding it when its price, name or category changed, the change-log entries
/// (the change, and its move when its category changed), and the notifications the change produces.
/// Shared by the catalog's `update` and the market simulation, so every change is stored the same way.
///
/// The caller must hold the product's row lock (`SELECT … FOR NO KEY UPDATE`) since it read `old`: otherwise a
/// change stored meanwhile by another server would be overwritten without being compared against.
/// The search column follows the text by itself (it is generated from it).
enum PostgresProductChange {
    /// Stores `new` in place of `old` (same id) as of `now`.
    /// - Returns: The change-log entries written, in log order, with the events to publish for each: the
    ///   product change's first, then the notifications'.
    static func store(_ session: PostgresSession, from old: Product, to new: Product, at now: Date) async throws -> PostgresInboxRows.Entries {
        if try await write(session, from: old, to: new, at: now) { try await bumpCarts(session, holding: [new.id]) }
        return try await log(session, from: old, to: new, at: now)
    }

    /// The row and its price point; returns whether the carts holding the product are to get a new revision
    /// (see ``bumpCarts(_:holding:)``).
    static func write(_ session: PostgresSession, from old: Product, to new: Product, at now: Date) async throws -> Bool {
        try await session.execute("""
            UPDATE product SET name = \(new.name), description = \(new.description), price = \(new.price.minorUnits),
                categoryId = \(new.categoryId), stock = \(Int64(new.stock))
            WHERE id = \(new.id)
            """)
        if old.price != new.price || old.stock != new.stock { try await PostgresPriceHistory.record(session, new, at: now) }
        if old.categoryId != new.categoryId {
            // Both categories' counts, in id order (as deletions lock them).
            for (categoryId, change) in [(old.categoryId, Int64(-1)), (new.categoryId, 1)].sorted(by: { $0.0 < $1.0 }) {
                try await PostgresCategoryCounts.add(change, to: categoryId, session)
            }
        }
        return old.price != new.price || old.categoryId != new.categoryId || old.name != new.name
    }

    /// A new revision of every cart holding one of `productIds`: what such a cart shows changed (a price, a tax
    /// rate, a name), so a checkout of the cart as the shopper saw it before is refused (`cartChanged`) rather
    /// than charging what they did not see. One statement, locking the revisions in owner order, so that
    /// changes of products in the same carts take their locks in one order.
    static func bumpCarts(_ session: PostgresSession, holding productIds: [String]) async throws {
        guard !productIds.isEmpty else { return }
        try await session.execute("""
            INSERT INTO cart_revision (owner, revision)
            SELECT DISTINCT owner, 1 FROM cart_line WHERE productId = ANY(\(productIds)) ORDER BY owner
            ON CONFLICT (owner) DO UPDATE SET revision = cart_revision.revision + 1
            """)
    }

    /// The change-log entries of the change (its move when its category changed, its coming back in stock
    /// when its stock went from 0 to more) and its notifications.
    /// Last in the transaction: the change log's lock is held from the first entry to the commit, so no
    /// other lock may be waited for after it (a tick writes every change and bumps every cart first).
    static func log(_ session: PostgresSession, from old: Product, to new: Product, at now: Date) async throws -> PostgresInboxRows.Entries {
        var entries: PostgresInboxRows.Entries = [
            (try await PostgresChangeLog.append(session, .productChanged, new.id, at: now), [.productChanged(new)]),
        ]
        if old.categoryId != new.categoryId {
            let seq = try await PostgresChangeLog.append(session, .productMoved, "\(new.id) \(old.categoryId) \(new.categoryId)", at: now)
            entries.append((seq, [.productMoved(productId: new.id, from: old.categoryId, to: new.categoryId)]))
        }
        if old.stock == 0 && new.stock > 0 {
            let seq = try await PostgresChangeLog.append(session, .productRestocked, new.id, at: now)
            entries.append((seq, [.productRestocked(productId: new.id)]))
        }
        return entries + (try await PostgresInboxRows.productChanged(session, from: old, to: new, at: now))
    }

    /// Product `id` as stored, locked until the transaction ends (`FOR NO KEY UPDATE`: a change of it by any
    /// server waits until then), or nil.
    static func lockedProduct(_ session: PostgresSession, id: String) async throws -> Product? {
        try await session.first("SELECT \(unescaped: PostgresRows.productColumns) FROM product p WHERE p.id = \(id) FOR NO KEY UPDATE")
            .map(PostgresRows.product)
    }
}
