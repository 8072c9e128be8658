/// Reads and changes the product catalog.
///
/// Live implementations publish ``ShopEvent/productCreated(_:)``, ``ShopEvent/productsDeleted(_:)`` and
/// ``ShopEvent/productChanged(_:)``
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

    /// Changes an existing product (keyed by ``IdempotencyKey/current`` like ``create(_:)``). A change of
    /// price or stock adds a ``PricePoint`` to the product's history. Live implementations publish
    /// ``ShopEvent/productChanged(_:)`` after the change commits.
    /// - Parameters:
    ///   - id: The product's id.
    ///   - update: The values to change.
    /// - Returns: The product as stored after the change.
    /// - Throws: ``ShopError`` `productNotFound`, `validationFailed` or `categoryNotFound`.
    func update(id: String, _ update: ProductUpdate) async throws -> Product

    /// The last `limit` entries of a product's price history, oldest first (at most the last 1 000 are
    /// kept).
    /// - Throws: ``ShopError`` `productNotFound`.
    func priceHistory(productId: String, limit: Int) async throws -> [PricePoint]
}
