import Foundation

/// A product in the catalog.
public struct Product: Codable, Equatable, Hashable, Sendable, Identifiable {
    /// Stable identifier such as `"p-0001"`.
    public var id: String
    /// Display name.
    public var name: String
    /// Longer description, at most 500 characters for products created through the form.
    public var description: String
    /// Unit price.
    public var price: Money
    /// The ``Category/id`` this product belongs to.
    public var categoryId: String
    /// Units available; `0` means out of stock.
    public var stock: Int
    /// The most units one order (and so one cart line) may hold.
    public var maxPerOrder: Int
    /// When the product was added to the catalog.
    public var createdAt: Date
    /// Whether the product is shown in the featured section.
    public var isFeatured: Bool

    /// Creates a product.
    public init(
        id: String, name: String, description: String, price: Money, categoryId: String,
        stock: Int, maxPerOrder: Int, createdAt: Date, isFeatured: Bool
    ) {
        self.id = id
        self.name = name
        self.description = description
        self.price = price
        self.categoryId = categoryId
        self.stock = stock
        self.maxPerOrder = maxPerOrder
        self.createdAt = createdAt
        self.isFeatured = isFeatured
    }

    /// Whether at least one unit is available.
    public var isInStock: Bool { stock > 0 }

    /// The most units a customer may put in the cart: `min(maxPerOrder, stock)`.
    public var purchasableQuantity: Int { max(0, min(maxPerOrder, stock)) }
}
