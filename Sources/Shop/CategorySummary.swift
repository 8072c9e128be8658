/// A category with the number of products it holds.
public struct CategorySummary: Codable, Equatable, Sendable, Identifiable {
    /// The category.
    public var category: Category
    /// How many products belong to it.
    public var productCount: Int

    /// Creates a summary.
    public init(category: Category, productCount: Int) {
        self.category = category
        self.productCount = productCount
    }

    /// The category's identifier.
    public var id: String { category.id }
}
