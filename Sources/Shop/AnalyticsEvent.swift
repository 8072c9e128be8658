import Foundation

/// Something a shopper did that analytics records: a product viewed, a quantity changed, a favourite
/// added or removed, units added to the cart, an order placed.
public struct AnalyticsEvent: Equatable, Hashable, Sendable {
    /// What happened.
    public enum Kind: String, CaseIterable, Sendable {
        /// A product page loaded its product (once per opening of the page).
        case productViewed
        /// A quantity was stepped on a product page, or a cart line's quantity change was stored.
        case quantityChanged
        /// A favourite mark was stored.
        case favoriteAdded
        /// A favourite mark was removed.
        case favoriteRemoved
        /// Units were added to the cart (stored).
        case addedToCart
        /// An order was placed.
        case checkout
    }

    /// What happened.
    public var kind: Kind
    /// The product concerned; nil for a checkout.
    public var productId: String?
    /// The quantity concerned (the new quantity, the units added, or the units ordered); nil when none.
    public var quantity: Int?
    /// Who did it.
    public var shopper: Shopper
    /// When.
    public var at: Date

    /// Creates an event.
    public init(kind: Kind, productId: String? = nil, quantity: Int? = nil, shopper: Shopper, at: Date) {
        self.kind = kind
        self.productId = productId
        self.quantity = quantity
        self.shopper = shopper
        self.at = at
    }
}
