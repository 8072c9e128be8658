/// The customer's placed orders.
public protocol OrderService: Sendable {
    /// The most recent orders, newest first.
    /// - Parameter limit: The most orders to return.
    func recentOrders(limit: Int) async throws -> [Order]
}
