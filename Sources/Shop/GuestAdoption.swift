/// What signing in did with the guest's data: the merged cart, and the lines that could not keep all
/// their units.
public struct GuestAdoption: Equatable, Sendable {
    /// The account's cart after the merge.
    public var cart: Cart
    /// Lines whose merged quantity was lowered to what stock and the per-order maximum allow (or dropped,
    /// `kept` 0, when the product has no stock).
    public var capped: [CappedLine]

    /// Creates an adoption report.
    public init(cart: Cart, capped: [CappedLine]) {
        self.cart = cart
        self.capped = capped
    }
}

/// A merged cart line whose quantity was lowered.
public struct CappedLine: Equatable, Sendable {
    /// The product.
    public var productId: String
    /// Its name.
    public var name: String
    /// The account's units plus the guest's.
    public var requested: Int
    /// The units kept.
    public var kept: Int

    /// Creates a capped line.
    public init(productId: String, name: String, requested: Int, kept: Int) {
        self.productId = productId
        self.name = name
        self.requested = requested
        self.kept = kept
    }
}
