import Foundation
import PostgresNIO
import Shop
import ShopStore

/// The market simulation's storage on PostgreSQL: the changes of one tick in one transaction, each stored
/// as a product edit is (``PostgresProductChange``: the product row, a price point, a change-log entry,
/// the notifications it produces).
///
/// Several servers may simulate at once on one database, and editors may change the same products: the
/// transaction first locks the products it changes (`FOR NO KEY UPDATE`, in id order, as checkouts lock theirs,
/// so that two ticks never wait for each other in a cycle), then reads them, so each change applies to
/// the product as the last committed change left it and none is lost. The same seed on the same catalog
/// gives the same picks; what they do to prices depends on what other servers did first.
struct PostgresMarketStore: MarketStore {
    let database: PostgresShopDatabase

    /// The ids of the catalog's products, in creation order. The rows are collected on the connection's event
    /// loop and decoded in the global pool: a million of them would hold up the loop's other connections (and
    /// the main thread, where the simulation runs) for a noticeable time.
    func productIds() async throws -> [String] {
        let rows = try await database.read { session in try await session.rows("SELECT id FROM product ORDER BY seq") }
        return try await Self.ids(of: rows)
    }

    /// The first column of each of `rows`, decoded in the global pool.
    @concurrent
    private static func ids(of rows: [PostgresRow]) async throws -> [String] {
        try rows.map { try $0.decode(String.self) }
    }

    /// Stores `changes` in one transaction, after locking their products.
    func store(_ changes: [MarketWalk.Change], at date: Date) async throws -> PostgresInboxRows.Entries {
        try await database.write { session in
            let ids = Array(Set(changes.map(\.productId))).sorted()
            let locked = try await PostgresRows.products(session, """
                SELECT \(unescaped: PostgresRows.productColumns) FROM product p WHERE p.id = ANY(\(ids)) ORDER BY p.id FOR NO KEY UPDATE
                """)
            // The products as this transaction changed them: a product picked twice changes twice.
            var products = Dictionary(uniqueKeysWithValues: locked.map { ($0.id, $0) })
            // Every row first, then every cart's revision in one statement, then every entry: the change log's
            // lock, taken at the first entry, must not be held while waiting for a cart's (a checkout holds
            // its cart's and then waits for the log's).
            var stored: [(old: Product, new: Product)] = []
            var touchingCarts: Set<String> = []
            for change in changes {
                guard let old = products[change.productId] else { continue }
                let new = change.applied(to: old)
                guard new != old else { continue }
                if try await PostgresProductChange.write(session, from: old, to: new, at: date) { touchingCarts.insert(new.id) }
                products[change.productId] = new
                stored.append((old, new))
            }
            try await PostgresProductChange.bumpCarts(session, holding: touchingCarts.sorted())
            var entries: PostgresInboxRows.Entries = []
            for (old, new) in stored { entries += try await PostgresProductChange.log(session, from: old, to: new, at: date) }
            return entries
        }
    }
}
