/// One page of a product query's results.
public struct ProductPage: Codable, Equatable, Sendable {
    /// The products on this page, in the query's order.
    public var products: [Product]
    /// How many products match the query in total, across all pages.
    public var totalCount: Int

    /// Creates a page.
    public init(products: [Product], totalCount: Int) {
        self.products = products
        self.totalCount = totalCount
    }
}
