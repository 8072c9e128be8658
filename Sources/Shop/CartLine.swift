/// One product in the cart, with the price it currently sells for.
public struct CartLine: Codable, Equatable, Sendable, Identifiable {
    /// The product in this line.
    public var productId: String
    /// The product's name.
    public var name: String
    /// The product's category, which decides its tax rate.
    public var categoryId: String
    /// The current unit price.
    public var unitPrice: Money
    /// Units in the cart; always at least 1.
    public var quantity: Int

    /// Creates a cart line.
    public init(productId: String, name: String, categoryId: String, unitPrice: Money, quantity: Int) {
        self.productId = productId
        self.name = name
        self.categoryId = categoryId
        self.unitPrice = unitPrice
        self.quantity = quantity
    }

    /// The line's identifier: its product.
    public var id: String { productId }

    /// `unitPrice * quantity`.
    public var lineTotal: Money { unitPrice * quantity }
}
