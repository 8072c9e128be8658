/// A request for one page of products.
public struct ProductQuery: Codable, Equatable, Hashable, Sendable {
    /// Words to find in names and descriptions; empty means every product. Each word must match
    /// (the last one as a prefix); words without letters or digits are ignored, and text made only
    /// of such words matches nothing.
    public var searchText: String
    /// Only products of this category, or all when `nil`.
    public var categoryId: String?
    /// The order of the results.
    public var sort: ProductSort
    /// How many matching products to skip.
    public var offset: Int
    /// The most products to return.
    public var limit: Int

    /// Creates a query.
    public init(searchText: String = "", categoryId: String? = nil, sort: ProductSort = .name, offset: Int = 0, limit: Int = 20) {
        self.searchText = searchText
        self.categoryId = categoryId
        self.sort = sort
        self.offset = offset
        self.limit = limit
    }
}
