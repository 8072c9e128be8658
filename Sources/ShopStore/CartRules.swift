import Shop

/// What a cart line may hold, checked by every store before it stores a line or places an order.
package enum CartRules {
    /// What a line's quantity is checked against: a product's stock and per-order maximum, and the names an
    /// error gives it by. A cart change reads only these, not the whole product.
    package struct StockLimits: Sendable {
        package let productId: String
        package let name: String
        package let stock: Int
        package let maxPerOrder: Int

        /// The limits of the product `productId` (named `name` in errors).
        package init(productId: String, name: String, stock: Int, maxPerOrder: Int) {
            self.productId = productId
            self.name = name
            self.stock = stock
            self.maxPerOrder = maxPerOrder
        }
    }

    /// Refuses a quantity the product cannot supply: out of stock, more than in stock, more than allowed per order.
    package static func checkAvailability(of product: Product, quantity: Int) throws {
        try checkAvailability(
            of: StockLimits(productId: product.id, name: product.name, stock: product.stock, maxPerOrder: product.maxPerOrder),
            quantity: quantity)
    }

    /// Refuses a quantity beyond `limits`: out of stock, more than in stock, more than allowed per order.
    package static func checkAvailability(of limits: StockLimits, quantity: Int) throws {
        if limits.stock == 0 { throw ShopError.outOfStock(limits.productId, name: limits.name) }
        if quantity > limits.stock {
            throw ShopError.quantityExceedsStock(limits.productId, name: limits.name, requested: quantity, available: limits.stock)
        }
        if quantity > limits.maxPerOrder {
            throw ShopError.quantityExceedsMaximum(limits.productId, name: limits.name, requested: quantity, maximum: limits.maxPerOrder)
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
