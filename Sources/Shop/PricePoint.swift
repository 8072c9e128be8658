import Foundation

/// A product's price and stock as they were from a moment on: one entry of its price history.
public struct PricePoint: Codable, Equatable, Hashable, Sendable {
    /// The unit price.
    public var price: Money
    /// The units in stock.
    public var stock: Int
    /// When the price and stock became these.
    public var at: Date

    /// Creates a point.
    public init(price: Money, stock: Int, at: Date) {
        self.price = price
        self.stock = stock
        self.at = at
    }
}
