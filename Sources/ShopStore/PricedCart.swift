import Shop

/// A cart as stored at one revision, with each line's tax rate: what a change needs to derive the next
/// revision's cart from this one without reading every line again.
package struct PricedCart: Sendable, Equatable {
    /// The lines, in the order they were first added.
    package var lines: [CartLine]
    /// The tax rate (basis points) of each line's category, by position in `lines`.
    package var taxRates: [Int]
    /// The cart revision these lines are.
    package var revision: Int64

    /// A cart of `lines`, each taxed at the rate of the same position in `taxRates`, at `revision`.
    package init(lines: [CartLine], taxRates: [Int], revision: Int64) {
        self.lines = lines
        self.taxRates = taxRates
        self.revision = revision
    }

    /// The cart, with its tax.
    package var cart: Cart {
        Cart(lines: lines, tax: TaxRules.tax(zip(lines, taxRates).map { ($0.lineTotal, $1) }), revision: revision)
    }

    /// This cart after a change of the line of `productId` only, at `revision`: the line as it is now
    /// (`current`, nil when it went) replaces the old one in place, or comes last when it is new (lines
    /// are ordered by their autoincremented row).
    package func replacingLine(of productId: String, with current: (line: CartLine, taxRate: Int)?, revision: Int64) -> PricedCart {
        var next = self
        next.revision = revision
        if let index = lines.firstIndex(where: { $0.productId == productId }) {
            if let current {
                next.lines[index] = current.line
                next.taxRates[index] = current.taxRate
            } else {
                next.lines.remove(at: index)
                next.taxRates.remove(at: index)
            }
        } else if let current {
            next.lines.append(current.line)
            next.taxRates.append(current.taxRate)
        }
        return next
    }
}
