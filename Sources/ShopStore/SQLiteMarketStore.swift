import Foundation
import GRDB
import Shop

/// The market simulation's storage on SQLite: changes stored by ``ProductChangeRows``, as the catalog's
/// edits are. The database has one writer at a time, so a change always applies to the product as stored.
struct SQLiteMarketStore: MarketStore {
    let database: ShopDatabase

    /// The ids of the catalog's products, in creation order.
    func productIds() async throws -> [String] {
        try await database.writer.read { db in try String.fetchAll(db, sql: "SELECT id FROM product ORDER BY seq") }
    }

    /// Stores `changes` in one write transaction.
    func store(_ changes: [MarketWalk.Change], at date: Date) async throws -> [(seq: Int64, events: [ShopEvent])] {
        try await database.write { db -> [(seq: Int64, events: [ShopEvent])] in
            var entries: [(seq: Int64, events: [ShopEvent])] = []
            for change in changes {
                guard let old = try StoredRows.product(db, id: change.productId) else { continue }
                let new = change.applied(to: old)
                guard new != old else { continue }
                entries += try ProductChangeRows.store(db, from: old, to: new, at: date)
            }
            return entries
        }
    }
}
