/// Each shopper's orders: placing the cart as an order, and the orders placed. An order placed for a signed-in
/// session (``WritingSession``) that was signed out or expired in the store throws ``ShopError/sessionEnded``
/// and places nothing.
public protocol OrderService: Sendable {
    /// The most recent orders, newest first.
    /// - Parameter limit: The most orders to return.
    func recentOrders(limit: Int, of shopper: Shopper) async throws -> [Order]

    /// Places an order for the whole cart in one transaction: the order is written, stock is
    /// decremented and the cart emptied, or nothing changes. Live implementations publish
    /// ``ShopEvent/cartChanged(_:shopper:)`` and then ``ShopEvent/orderPlaced(_:shopper:)`` after the commit.
    /// - Parameter expectedRevision: the cart revision the customer was shown; when the stored cart has
    ///   another, nothing is placed (`nil` places whatever is stored).
    /// - Returns: The placed order.
    /// - Throws: ``ShopError`` `signInRequired` for a guest (orders are an account's), `cartChanged`,
    ///   `emptyCart`, or `productNotFound` / `outOfStock` /
    ///   `quantityExceedsStock` / `quantityExceedsMaximum` naming the first offending line in `details.productId`.
    func placeOrder(expectedRevision: Int64?, for shopper: Shopper) async throws -> Order
}
