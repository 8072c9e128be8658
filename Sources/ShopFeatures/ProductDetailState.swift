import Shop

/// Everything a product page shows, as one value.
public struct ProductDetailState: Codable, Equatable, Sendable {
    public var phase: PhaseName
    /// The load's failure, or else the last failed action's; `null` when none.
    @ExplicitNull public var error: ErrorInfo?
    /// `null` until loaded (and after the product was deleted).
    @ExplicitNull public var product: ProductInfo?
    public var isFavorite: Bool
    /// Units to add, from 1 to `maxQuantity`.
    public var quantity: Int
    /// `min(maxPerOrder, stock)`; 0 when out of stock or not loaded.
    public var maxQuantity: Int
    /// `price * quantity`; `null` until loaded.
    @ExplicitNull public var totalPrice: Money?
    public var canAddToCart: Bool
    public var isOutOfStock: Bool
    public var isAddingToCart: Bool
    /// `true` for 2 seconds after a successful add.
    public var didAddToCart: Bool
}
