import Shop

/// Everything the cart screen shows, as one value.
///
/// Shaped for small patches: a line carries no total of its own (a client shows `unitPrice × quantity`),
/// and the four figures that every change moves together sit in one ``CartTotals`` value, so a one-line
/// quantity change is two operations: the line's `quantity` and the whole `totals`.
public struct CartState: Codable, Equatable, Sendable {
    public var phase: PhaseName
    /// The load's failure, or else the last failed change's; `null` when none.
    @ExplicitNull public var error: ErrorInfo?
    /// In the order products were first added.
    public var lines: [CartLineSnapshot]
    /// Units, subtotal, tax and total of the shown lines.
    public var totals: CartTotals
    public var checkoutPhase: SubmitPhaseName
    /// The last checkout's operational failure; `null` otherwise.
    @ExplicitNull public var checkoutError: ErrorInfo?
    /// The order the last successful checkout placed; `null` before, and again once the cart changes.
    @ExplicitNull public var lastOrder: OrderSnapshot?
    /// Lines that went without the user removing them (their product was deleted), and why; cleared by
    /// the user's next change, a checkout or `dismissNotices`.
    public var notices: [CartNotice]
}

/// A line that left the cart without the user removing it.
public struct CartNotice: Codable, Equatable, Sendable {
    /// The product whose line went.
    public var productId: String
    /// Its name, as the line showed it.
    public var name: String
    /// Why, machine-readable.
    public var reason: CartNoticeReason
    /// Why, for people.
    public var message: String
}

extension CartNotice {
    /// A line removed because its product was deleted from the catalog (kept out of the type's body so
    /// the memberwise initializer remains).
    init(productDeleted line: CartLine) {
        productId = line.productId
        name = line.name
        reason = .productDeleted
        message = "\(line.name) was removed from your cart: it is no longer sold."
    }
}

/// One cart line. Its total is `unitPrice × quantity`, exact in minor units; clients compute it.
public struct CartLineSnapshot: Codable, Equatable, Sendable {
    public var productId: String
    public var name: String
    public var unitPrice: Money
    public var quantity: Int

    init(_ line: CartLine) {
        productId = line.productId
        name = line.name
        unitPrice = line.unitPrice
        quantity = line.quantity
    }
}

/// The cart's figures, as priced by the cart service.
public struct CartTotals: Codable, Equatable, Sendable {
    /// Units across all lines.
    public var itemCount: Int
    /// The sum of the line totals.
    public var subtotal: Money
    /// From the pricing rules (the cart service prices the cart).
    public var tax: Money
    /// `subtotal + tax`.
    public var total: Money
}

extension CartTotals {
    /// The figures of a priced cart (kept out of the type's body so the memberwise initializer remains).
    init(_ cart: Cart) {
        itemCount = cart.itemCount
        subtotal = cart.subtotal
        tax = cart.tax
        // The cart's `total` sums its lines again.
        total = subtotal + tax
    }
}

extension CartNotice {
    /// A guest's line merged at sign-in whose quantity was lowered to what stock and the per-order maximum
    /// allow (kept out of the type's body so the memberwise initializer remains).
    init(capped line: CappedLine) {
        productId = line.productId
        name = line.name
        reason = .quantityCapped
        message = line.kept == 0
            ? "\(line.name) was not moved to your cart: it is out of stock."
            : "Your cart keeps \(line.kept) of \(line.name), not \(line.requested): that is all that can be ordered."
    }
}

/// Why a line left the cart, or lost units, without the user asking.
public enum CartNoticeReason: String, Codable, CaseIterable, Sendable {
    /// Its product was deleted from the catalog.
    case productDeleted
    /// Merging the guest cart at sign-in lowered its quantity (or dropped it) to what can be ordered.
    case quantityCapped
}
