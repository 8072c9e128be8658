/// The customer's shopping cart.
///
/// Every change returns the priced cart after it committed; live implementations also publish
/// ``ShopEvent/cartChanged(_:)`` (and, for checkout, ``ShopEvent/orderPlaced(_:)``) after the commit.
/// A refused change leaves the cart as it was.
public protocol CartService: Sendable {
    /// The current cart.
    func cart() async throws -> Cart

    /// Adds units of a product, merging with its existing line.
    /// - Throws: ``ShopError`` `invalidQuantity` (below 1), `productNotFound`, `outOfStock`,
    ///   `quantityExceedsStock` or `quantityExceedsMaximum` (for the merged quantity).
    @discardableResult
    func add(productId: String, quantity: Int) async throws -> Cart

    /// Sets the quantity of a line; `0` removes it.
    /// - Throws: ``ShopError`` `invalidQuantity` (negative), `notInCart`, `quantityExceedsStock`
    ///   or `quantityExceedsMaximum`.
    @discardableResult
    func setQuantity(productId: String, quantity: Int) async throws -> Cart

    /// Removes a product's line.
    /// - Throws: ``ShopError`` `notInCart`.
    @discardableResult
    func remove(productId: String) async throws -> Cart

    /// Empties the cart.
    @discardableResult
    func clear() async throws -> Cart

    /// Places an order for the whole cart in one transaction: the order is written, stock is
    /// decremented and the cart emptied, or nothing changes.
    /// - Returns: The placed order.
    /// - Throws: ``ShopError`` `emptyCart`, or `outOfStock` / `quantityExceedsStock` /
    ///   `quantityExceedsMaximum` naming the first offending line in `details.productId`.
    func checkout() async throws -> Order
}
