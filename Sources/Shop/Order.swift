import Foundation

/// A placed order. Its amounts are fixed at checkout.
public struct Order: Codable, Equatable, Sendable, Identifiable {
    /// Stable identifier such as `"o-000001"`.
    public var id: String
    /// When the order was placed.
    public var createdAt: Date
    /// The ordered products.
    public var lines: [OrderLine]
    /// Sum of the line totals.
    public var subtotal: Money
    /// Tax charged.
    public var tax: Money
    /// `subtotal + tax`.
    public var total: Money

    /// Creates an order.
    public init(id: String, createdAt: Date, lines: [OrderLine], subtotal: Money, tax: Money, total: Money) {
        self.id = id
        self.createdAt = createdAt
        self.lines = lines
        self.subtotal = subtotal
        self.tax = tax
        self.total = total
    }

    /// The number of units across all lines.
    public var itemCount: Int { lines.reduce(0) { $0 + $1.quantity } }
}
