import Shop

/// What a cart line may hold, checked by every store before it stores a line or places an order.
package enum CartRules {
    /// Refuses a quantity the product cannot supply: out of stock, more than in stock, more than allowed per order.
    package static func checkAvailability(of product: Product, quantity: Int) throws {
        if product.stock == 0 { throw ShopError.outOfStock(product.id, name: product.name) }
        if quantity > product.stock {
            throw ShopError.quantityExceedsStock(product.id, name: product.name, requested: quantity, available: product.stock)
        }
        if quantity > product.maxPerOrder {
            throw ShopError.quantityExceedsMaximum(product.id, name: product.name, requested: quantity, maximum: product.maxPerOrder)
        }
    }

    /// A guest's line merged into an account's cart when the guest signs in: the account's units plus the
    /// guest's, capped by stock and the per-order maximum, never below what the account had.
    /// - Parameters:
    ///   - existing: The units of the product in the account's cart (0 when none).
    ///   - adding: The guest's units.
    ///   - product: The product as stored now.
    /// - Returns: The units to keep, and the capped line to report when they are fewer than requested.
    package static func merged(existing: Int, adding: Int, of product: Product) -> (kept: Int, capped: CappedLine?) {
        let requested = existing + adding
        let kept = max(existing, min(requested, product.stock, product.maxPerOrder))
        let capped = kept < requested ? CappedLine(productId: product.id, name: product.name, requested: requested, kept: kept) : nil
        return (kept, capped)
    }
}
