import Shop

/// Everything the cart screen shows, as one value.
public struct CartState: Codable, Equatable, Sendable {
    public var phase: PhaseName
    /// The load's failure, or else the last failed change's; `null` when none.
    @ExplicitNull public var error: ErrorInfo?
    /// In the order products were first added.
    public var lines: [CartLineSnapshot]
    public var subtotal: Money
    /// From the pricing rules (the cart service prices the cart).
    public var tax: Money
    public var total: Money
    /// Units across all lines.
    public var itemCount: Int
    public var checkoutPhase: SubmitPhaseName
    /// The last checkout's operational failure; `null` otherwise.
    @ExplicitNull public var checkoutError: ErrorInfo?
    /// The order the last successful checkout placed; `null` before.
    @ExplicitNull public var lastOrder: OrderSnapshot?
}

/// One cart line.
public struct CartLineSnapshot: Codable, Equatable, Sendable {
    public var productId: String
    public var name: String
    public var unitPrice: Money
    public var quantity: Int
    public var lineTotal: Money

    init(_ line: CartLine) {
        productId = line.productId
        name = line.name
        unitPrice = line.unitPrice
        quantity = line.quantity
        lineTotal = line.lineTotal
    }
}
