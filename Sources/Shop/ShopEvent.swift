/// A committed change, published on the ``ShopEvents`` feed.
public enum ShopEvent: Equatable, Sendable {
    /// The cart changed; the value is the cart after the change.
    case cartChanged(Cart)
    /// An order was placed (published after the ``cartChanged(_:)`` that emptied the cart).
    case orderPlaced(Order)
    /// A product was added to the catalog.
    case productCreated(Product)
    /// Products were removed from the catalog.
    case productsDeleted([String])
    /// A product was marked or unmarked as favourite.
    case favoriteChanged(productId: String, isFavorite: Bool)
    /// Changes were missed (the change log was pruned past this server's position, or the catalog was
    /// replaced): everything shown may be stale and is to be loaded again.
    case resync

    /// Whether the set of products or their counts per category changed.
    public var changesCatalog: Bool {
        switch self {
        case .productCreated, .productsDeleted, .resync: true
        case .cartChanged, .orderPlaced, .favoriteChanged: false
        }
    }
}
