/// Each shopper's shopping cart.
///
/// Every change returns the priced cart after it committed; live implementations also publish
/// ``ShopEvent/cartChanged(_:shopper:)`` after the commit. A refused change leaves the cart as it was. Placing the
/// cart as an order is the ``OrderService``'s. A change made for a signed-in session (``WritingSession``) that
/// was signed out or expired in the store throws ``ShopError/sessionEnded`` and changes nothing.
public protocol CartService: Sendable {
    /// The shopper's cart as stored.
    func cart(of shopper: Shopper) async throws -> Cart

    /// Adds units of a product, merging with its existing line.
    /// - Throws: ``ShopError`` `invalidQuantity` (below 1), `productNotFound`, `outOfStock`,
    ///   `quantityExceedsStock` or `quantityExceedsMaximum` (for the merged quantity).
    @discardableResult
    func add(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart

    /// Sets the quantity of a line; `0` removes it.
    /// - Throws: ``ShopError`` `invalidQuantity` (negative), `notInCart`, `quantityExceedsStock`
    ///   or `quantityExceedsMaximum`.
    @discardableResult
    func setQuantity(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart

    /// Removes a product's line.
    /// - Throws: ``ShopError`` `notInCart`.
    @discardableResult
    func remove(productId: String, for shopper: Shopper) async throws -> Cart

    /// Empties the cart.
    @discardableResult
    func clear(for shopper: Shopper) async throws -> Cart
}
