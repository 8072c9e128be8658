import Shop

/// The tax computation. Carts and orders are priced with it inside the transaction that reads or places
/// them, so an order's tax always belongs to its lines (one pricing path).
package enum TaxRules {
    /// Each amount at its rate (basis points), rounded half away from zero, added up.
    package static func tax(_ amounts: [(amount: Money, taxRate: Int)]) -> Money {
        amounts.map { $0.amount.applying(basisPoints: $0.taxRate) }.sum()
    }
}
