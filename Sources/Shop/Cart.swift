/// The shopping cart, priced by the store in the transaction that read it (each line at its category's tax
/// rate), never by a ViewModel.
public struct Cart: Codable, Equatable, Sendable {
    /// The lines, in the order products were first added.
    public var lines: [CartLine]
    /// Tax on the lines, as computed by the pricing rules.
    public var tax: Money
    /// Increases with every committed change of the cart. When two copies of the cart arrive out of
    /// order (a call's result and a change-feed event), keep the one with the higher revision.
    public var revision: Int64

    /// Creates a cart.
    public init(lines: [CartLine], tax: Money, revision: Int64) {
        self.lines = lines
        self.tax = tax
        self.revision = revision
    }

    /// An empty cart at revision 0.
    public static let empty = Cart(lines: [], tax: .zero, revision: 0)

    /// The sum of the line totals.
    public var subtotal: Money { lines.reduce(.zero) { $0 + $1.lineTotal } }
    /// `subtotal + tax`.
    public var total: Money { subtotal + tax }
    /// The number of units across all lines.
    public var itemCount: Int { lines.reduce(0) { $0 + $1.quantity } }
    /// Whether the cart has no lines.
    public var isEmpty: Bool { lines.isEmpty }

    /// The line for a product, if the product is in the cart.
    public func line(for productId: String) -> CartLine? {
        // By index, copying out only the line found: every open product page looks its line up at every cart
        // change, and `first(where:)` copied out each line it passed.
        guard let index = lines.firstIndex(where: { $0.productId == productId }) else { return nil }
        return lines[index]
    }
}
