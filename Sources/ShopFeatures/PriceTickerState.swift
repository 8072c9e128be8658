import Shop

/// Everything a price ticker shows, as one value.
public struct PriceTickerState: Codable, Equatable, Sendable {
    /// The product's load: `failed` when it does not exist or was deleted.
    public var phase: PhaseName
    /// The load's failure; `null` when none.
    @ExplicitNull public var error: ErrorInfo?
    /// The product followed.
    public var productId: String
    /// Its name; empty until loaded.
    public var name: String
    /// Its unit price now; `null` until loaded.
    @ExplicitNull public var currentPrice: Money?
    /// Its units in stock now; `null` until loaded.
    @ExplicitNull public var stock: Int?
    /// Its last prices and stock levels with their times, oldest first, at most 100.
    public var priceHistory: [PricePointSnapshot]
    /// Whether stored changes are followed (`connect`/`disconnect`; open connects).
    public var isConnected: Bool
}

/// One point of a price history.
public struct PricePointSnapshot: Codable, Equatable, Sendable {
    /// The unit price.
    public var price: Money
    /// The units in stock.
    public var stock: Int
    /// From when the price and stock were these.
    public var at: Timestamp

    /// The snapshot of `point`.
    public init(_ point: PricePoint) {
        price = point.price
        stock = point.stock
        at = Timestamp(point.at)
    }
}
