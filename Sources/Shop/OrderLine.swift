/// One product of a placed order, with the name and price it had when the order was placed.
public struct OrderLine: Codable, Equatable, Sendable {
    /// The product ordered (it may since have been deleted from the catalog).
    public var productId: String
    /// The product's name at checkout.
    public var name: String
    /// The unit price at checkout.
    public var unitPrice: Money
    /// Units ordered.
    public var quantity: Int

    /// Creates an order line.
    public init(productId: String, name: String, unitPrice: Money, quantity: Int) {
        self.productId = productId
        self.name = name
        self.unitPrice = unitPrice
        self.quantity = quantity
    }

    /// `unitPrice * quantity`.
    public var lineTotal: Money { unitPrice * quantity }
}
