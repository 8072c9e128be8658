/// Reads and changes the product catalog.
///
/// Live implementations publish ``ShopEvent/productCreated(_:)`` and ``ShopEvent/productsDeleted(_:)``
/// on the ``ShopEvents`` feed after their change commits.
public protocol CatalogService: Sendable {
    /// One page of the products matching a query.
    /// - Parameter query: Search text, category, sort order and paging.
    /// - Returns: The page and the total number of matches.
    func page(_ query: ProductQuery) async throws -> ProductPage

    /// One product.
    /// - Throws: ``ShopError`` `productNotFound`.
    func product(id: String) async throws -> Product

    /// Every category with its number of products, by name.
    func categories() async throws -> [CategorySummary]

    /// Featured products, newest first.
    /// - Parameter limit: The most products to return.
    func featured(limit: Int) async throws -> [Product]

    /// Adds a product to the catalog.
    /// - Returns: The created product with its new id.
    /// - Throws: ``ShopError`` `validationFailed` or `categoryNotFound`.
    func create(_ product: NewProduct) async throws -> Product

    /// Removes products (and their cart lines and favourite marks). Unknown ids are ignored.
    func delete(ids: [String]) async throws
}
