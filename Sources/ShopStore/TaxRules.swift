import Shop

/// The tax computation, shared by the pricing service and the carts it prices (which must be priced
/// inside their own transaction).
enum TaxRules {
    /// Each amount at its rate (basis points), rounded half away from zero, added up.
    static func tax(_ amounts: [(amount: Money, taxRate: Int)]) -> Money {
        amounts.map { $0.amount.applying(basisPoints: $0.taxRate) }.sum()
    }
}
