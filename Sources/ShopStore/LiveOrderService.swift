import GRDB
import Shop

/// Placed orders over the shop database.
struct LiveOrderService: OrderService {
    let database: ShopDatabase

    func recentOrders(limit: Int) async throws -> [Order] {
        try await StorageError.mapping {
            try await database.writer.read { db in try StoredRows.orders(db, limit: max(limit, 0)) }
        }
    }
}
