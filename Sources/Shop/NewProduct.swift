/// What it takes to create a product; the catalog assigns the id and creation date.
public struct NewProduct: Codable, Equatable, Sendable {
    /// Display name, at least 3 characters once trimmed.
    public var name: String
    /// Description, at most 500 characters.
    public var description: String
    /// Unit price, greater than zero.
    public var price: Money
    /// An existing category's id.
    public var categoryId: String
    /// Initial stock, at least 0.
    public var stock: Int
    /// Most units per order, at least 1.
    public var maxPerOrder: Int
    /// Whether to feature it.
    public var isFeatured: Bool

    /// Creates a description of a new product. The defaults give 100 units, 10 per order, not featured.
    public init(
        name: String, description: String, price: Money, categoryId: String,
        stock: Int = 100, maxPerOrder: Int = 10, isFeatured: Bool = false
    ) {
        self.name = name
        self.description = description
        self.price = price
        self.categoryId = categoryId
        self.stock = stock
        self.maxPerOrder = maxPerOrder
        self.isFeatured = isFeatured
    }
}
