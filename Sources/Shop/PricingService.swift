/// Tax rules. Tax is computed here (and by carts priced with these rules), never by a ViewModel.
public protocol PricingService: Sendable {
    /// The tax rate of a category, in basis points (`1900` is 19 %).
    /// - Throws: ``ShopError`` `categoryNotFound`.
    func taxRate(categoryId: String) async throws -> Int

    /// The tax on some lines: each line's total at its category's rate, rounded half away from zero
    /// per line, then added up.
    func tax(for lines: [CartLine]) async throws -> Money
}
