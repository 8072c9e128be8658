import GRDB
import Shop

/// The last committed cart of each shopper this process changed, so that the next change derives its
/// cart from it and the one line it touched instead of reading every line back (a fifth of a cart
/// change's CPU with a 20-line cart).
///
/// Sound because every write that changes what a cart shows bumps its revision in the same transaction
/// (cart changes, checkout, a product's price, name or category, a deletion, a guest's adoption, a reseed):
/// a cart known at revision `r` is the stored cart at `r`, and a change that finds the revision at `r + 1`
/// after its own bump knows that nothing else changed the cart in between, in this process or another.
/// Only committed carts are kept (``remember(_:of:)`` after the commit), so a rolled-back change is never
/// taken for the state at its revision.
final class CartCache: Sendable {
    /// How many shoppers' carts are kept; past it the cache starts again empty (a miss is a full read).
    static let capacity = 4_096

    private let carts = Locked<[String: PricedCart]>([:])
    private let derivations = Locked(0)

    /// How many carts were derived rather than read whole (for tests and profiles).
    var derivedCarts: Int { derivations.withLock { $0 } }

    /// The cart of `owner` after a change of `touched` (one product's line, or nil for any number of
    /// lines) whose revision bump was just written in `db`: derived from the cart kept at the revision
    /// before, or read whole.
    func cart(_ db: Database, of shopper: Shopper, touching touched: String?) throws -> PricedCart {
        let owner = shopper.storageKey
        let revision = try StoredRows.cartRevision(db, of: owner)
        if let touched, let known = carts.withLock({ $0[owner] }), known.revision == revision - 1 {
            derivations.withLock { $0 += 1 }
            return known.replacingLine(
                of: touched, with: try StoredRows.pricedLine(db, owner: owner, productId: touched), revision: revision)
        }
        return try StoredRows.pricedCart(db, of: shopper)
    }

    /// Keeps `cart`, committed, as the shopper's latest (unless a later revision is kept already).
    func remember(_ cart: PricedCart, of shopper: Shopper) {
        let owner = shopper.storageKey
        carts.withLock { carts in
            if let known = carts[owner], known.revision >= cart.revision { return }
            if carts.count >= Self.capacity { carts = [:] }
            carts[owner] = cart
        }
    }
}
