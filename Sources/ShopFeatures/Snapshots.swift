import Foundation
import Shop

// Wire shapes shared by several ViewModel states. Money is a decimal string, dates ISO-8601 strings.

/// A date as an ISO-8601 string, such as `"2025-06-01T00:00:00Z"`.
func iso8601(_ date: Date) -> String {
    date.formatted(.iso8601)
}

/// A product in a list.
public struct ProductSummary: Codable, Equatable, Sendable {
    public var id: String
    public var name: String
    public var price: Money
    /// The category id.
    public var category: String
    public var inStock: Bool
    public var isFeatured: Bool
    /// ISO-8601.
    public var createdAt: String

    init(_ product: Product) {
        id = product.id
        name = product.name
        price = product.price
        category = product.categoryId
        inStock = product.isInStock
        isFeatured = product.isFeatured
        createdAt = iso8601(product.createdAt)
    }
}

/// A product with all its details.
public struct ProductInfo: Codable, Equatable, Sendable {
    public var id: String
    public var name: String
    public var description: String
    public var price: Money
    /// The category id.
    public var category: String
    public var stock: Int
    public var maxPerOrder: Int
    public var inStock: Bool
    public var isFeatured: Bool
    /// ISO-8601.
    public var createdAt: String

    init(_ product: Product) {
        id = product.id
        name = product.name
        description = product.description
        price = product.price
        category = product.categoryId
        stock = product.stock
        maxPerOrder = product.maxPerOrder
        inStock = product.isInStock
        isFeatured = product.isFeatured
        createdAt = iso8601(product.createdAt)
    }
}

/// A category with its product count.
public struct CategoryCount: Codable, Equatable, Sendable {
    public var id: String
    public var name: String
    public var productCount: Int

    init(_ summary: CategorySummary) {
        id = summary.category.id
        name = summary.category.name
        productCount = summary.productCount
    }
}

/// A category to choose from.
public struct CategoryOption: Codable, Equatable, Sendable {
    public var id: String
    public var name: String

    init(_ category: Category) {
        id = category.id
        name = category.name
    }
}

/// A placed order.
public struct OrderSnapshot: Codable, Equatable, Sendable {
    public var id: String
    /// ISO-8601.
    public var createdAt: String
    public var lines: [OrderLineSnapshot]
    public var itemCount: Int
    public var subtotal: Money
    public var tax: Money
    public var total: Money

    init(_ order: Order) {
        id = order.id
        createdAt = iso8601(order.createdAt)
        lines = order.lines.map(OrderLineSnapshot.init)
        itemCount = order.itemCount
        subtotal = order.subtotal
        tax = order.tax
        total = order.total
    }
}

/// One line of a placed order.
public struct OrderLineSnapshot: Codable, Equatable, Sendable {
    public var productId: String
    public var name: String
    public var unitPrice: Money
    public var quantity: Int
    public var lineTotal: Money

    init(_ line: OrderLine) {
        productId = line.productId
        name = line.name
        unitPrice = line.unitPrice
        quantity = line.quantity
        lineTotal = line.lineTotal
    }
}
