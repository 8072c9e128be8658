import Shop

/// Everything a product page shows, as one value.
public struct ProductDetailState: Codable, Equatable, Sendable {
    public var phase: PhaseName
    /// The load's failure, or else the last failed action's; `null` when none.
    @ExplicitNull public var error: ErrorInfo?
    /// `null` until loaded (and after the product was deleted).
    @ExplicitNull public var product: ProductInfo?
    /// Whether the product is a favourite; `null` while unknown (the favourites could not be loaded: the
    /// product still shows, `error` says why, and `refresh` tries again).
    @ExplicitNull public var isFavorite: Bool?
    /// Whether `toggleFavorite` would be accepted (loaded, favourite mark known, no change saving).
    public var canToggleFavorite: Bool
    /// Units of this product already in the cart; `null` while unknown (the cart could not be loaded).
    @ExplicitNull public var inCart: Int?
    /// Units to add, from 1 to `maxQuantity` (1 when nothing more can be added).
    public var quantity: Int
    /// `min(maxPerOrder, stock)` less the units already in the cart; 0 when nothing more can be added or
    /// not loaded.
    public var maxQuantity: Int
    /// `price * quantity`; `null` until loaded.
    @ExplicitNull public var totalPrice: Money?
    /// Whether `addToCart` would be accepted: loaded, in stock, and `quantity` fits beside the cart's units.
    public var canAddToCart: Bool
    public var isOutOfStock: Bool
    public var isAddingToCart: Bool
    /// `true` for 2 seconds after a successful add.
    public var didAddToCart: Bool
}
