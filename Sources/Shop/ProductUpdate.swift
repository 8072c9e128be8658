/// A change to an existing product: each member that is not `nil` replaces the product's value.
///
/// The result must follow ``ProductRules`` as a new product does.
public struct ProductUpdate: Codable, Equatable, Sendable {
    /// New display name (trimmed when stored).
    public var name: String?
    /// New description.
    public var description: String?
    /// New unit price.
    public var price: Money?
    /// New category id (an existing category).
    public var categoryId: String?
    /// New stock, at least 0.
    public var stock: Int?

    /// Creates an update; members left `nil` keep the product's values.
    public init(
        name: String? = nil, description: String? = nil, price: Money? = nil, categoryId: String? = nil,
        stock: Int? = nil
    ) {
        self.name = name
        self.description = description
        self.price = price
        self.categoryId = categoryId
        self.stock = stock
    }

    /// `product` with this update's values.
    public func applied(to product: Product) -> Product {
        var changed = product
        if let name { changed.name = name.trimmingCharacters(in: .whitespacesAndNewlines) }
        if let description { changed.description = description }
        if let price { changed.price = price }
        if let categoryId { changed.categoryId = categoryId }
        if let stock { changed.stock = stock }
        return changed
    }
}
