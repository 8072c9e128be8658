import Foundation
import Shop

// Wire shapes shared by several ViewModel states. Money is a decimal string, dates ISO-8601 strings.


/// A product in a list.
public struct ProductSummary: Codable, Equatable, Sendable {
    public var id: String
    public var name: String
    public var price: Money
    /// The category id.
    public var category: String
    public var inStock: Bool
    public var isFeatured: Bool
    public var createdAt: Timestamp

    init(_ product: Product) {
        id = product.id
        name = product.name
        price = product.price
        category = product.categoryId
        inStock = product.isInStock
        isFeatured = product.isFeatured
        createdAt = Timestamp(product.createdAt)
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
    public var createdAt: Timestamp

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
        createdAt = Timestamp(product.createdAt)
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
    public var createdAt: Timestamp
    public var lines: [OrderLineSnapshot]
    public var itemCount: Int
    public var subtotal: Money
    public var tax: Money
    public var total: Money

    init(_ order: Order) {
        id = order.id
        createdAt = Timestamp(order.createdAt)
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
