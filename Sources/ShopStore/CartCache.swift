import GRDB
import Shop

/// The last cart of each shopper this process changed, so that the next change derives its cart from it
/// and the one line it touched instead of reading every line back (a fifth of a cart change's CPU with a
/// 20-line cart).
///
/// Sound because every write that changes what a cart shows bumps its revision in the same transaction
/// (cart changes, checkout, a product's price, name or category, a deletion, a guest's adoption, a reseed):
/// a cart known at revision `r` is the stored cart at `r`, and a change that finds the revision at `r + 1`
/// after its own bump knows that nothing else changed the cart in between, in this process or another.
/// A cart computed inside a transaction is known to the later writes of that transaction (a group commit's
/// next changes) and becomes known to every later one only when the transaction commits; a rollback
/// forgets it, and so does the rollback of the write's own savepoint in a group. Carts are computed only in
/// writes of the database's ``GroupCommit``, which says when each write and each transaction ends. The writes
/// of one database run one at a time on its writer, so one transaction's carts are never mixed with
/// another's.
final class CartCache: Sendable {
    /// How many shoppers' carts are kept; past it the cache starts again empty (a miss is a full read).
    static let capacity = 4_096

    private struct Known {
        /// Carts as committed, by owner.
        var committed: [String: PricedCart] = [:]
        /// Carts of the transaction under way, by owner.
        var uncommitted: [String: PricedCart] = [:]
        var derivations = 0
        var reuses = 0
    }

    private let known = Locked(Known())

    /// How many carts were derived rather than read whole (for tests and profiles).
    var derivedCarts: Int { known.withLock { $0.derivations } }
    /// How many carts ``current(_:of:)`` found known rather than read (for tests and profiles).
    var reusedCarts: Int { known.withLock { $0.reuses } }

    /// The cart of `owner` after a change of `touched` (one product's line, or nil for any number of
    /// lines) whose revision bump was just written in `db`: derived from the cart known at the revision
    /// before, or read whole. Call it last in the write: nothing after it may fail and roll the write back,
    /// since later writes of the transaction derive from what it returns.
    /// - Parameter written: the touched line as the change left it, when the change knows it (read otherwise).
    func cart(
        _ db: Database, of shopper: Shopper, touching touched: String?, written: WrittenLine = .unknown, in commits: GroupCommit
    ) throws -> PricedCart {
        let owner = shopper.storageKey
        let revision = try StoredRows.cartRevision(db, of: owner)
        let before = known.withLock { $0.uncommitted[owner] ?? $0.committed[owner] }
        let cart: PricedCart
        let derived: Bool
        if let touched, let before, before.revision == revision - 1 {
            let line: (line: CartLine, taxRate: Int)?
            switch written {
            case .unknown: line = try StoredRows.pricedLine(db, owner: owner, productId: touched)
            case .known(let known): line = known
            }
            cart = before.replacingLine(of: touched, with: line, revision: revision)
            derived = true
        } else {
            cart = try StoredRows.pricedCart(db, of: shopper)
            derived = false
        }
        keep(cart, of: owner, in: commits, derived: derived)
        return cart
    }

    /// The cart of `shopper` as `db` stores it now: the one known at its current revision, else read whole
    /// (a checkout's). Keeps nothing, so it may be called anywhere in a write.
    func current(_ db: Database, of shopper: Shopper) throws -> PricedCart {
        let owner = shopper.storageKey
        let revision = try StoredRows.cartRevision(db, of: owner)
        let kept = known.withLock { known -> PricedCart? in
            guard let cart = known.uncommitted[owner] ?? known.committed[owner], cart.revision == revision else { return nil }
            known.reuses += 1
            return cart
        }
        return try kept ?? StoredRows.pricedCart(db, of: shopper, revision: revision)
    }

    /// Keeps `cart` as `shopper`'s after a write that replaced the cart whole and bumped its revision to
    /// `cart.revision` (a checkout's emptied cart), so that the next change derives from it instead of reading
    /// the cart whole. Call it last in the write, as ``cart(_:of:touching:written:in:)``.
    func replaced(with cart: PricedCart, of shopper: Shopper, in commits: GroupCommit) {
        keep(cart, of: shopper.storageKey, in: commits)
    }

    /// Keeps `cart` for the rest of the transaction under way, and for later ones once it commits; forgets it
    /// again if the write's changes are rolled back (its savepoint), whatever rolled them back.
    /// - Parameter derived: whether `cart` was derived rather than read whole (counted for ``derivedCarts``).
    private func keep(_ cart: PricedCart, of owner: String, in commits: GroupCommit, derived: Bool = false) {
        let (isFirstOfTransaction, before) = known.withLock { known in
            if derived { known.derivations += 1 }
            let isFirst = known.uncommitted.isEmpty
            let before = known.uncommitted[owner]
            known.uncommitted[owner] = cart
            return (isFirst, before)
        }
        commits.afterWrite { [known] kept in
            guard !kept else { return }
            known.withLock { $0.uncommitted[owner] = before }
        }
        if isFirstOfTransaction {
            commits.afterTransaction { [known] committed in
                known.withLock { known in
                    if committed {
                        // The transaction's carts are the newest known: this database's writes run one at a
                        // time. (Not only those of a higher revision: a deleted revision row, a guest's after
                        // adoption, restarts its revisions, and an older cart kept at a higher one would be
                        // taken for the stored one when the revisions climb back to it.)
                        for (owner, cart) in known.uncommitted {
                            if known.committed.count >= Self.capacity { known.committed = [:] }
                            known.committed[owner] = cart
                        }
                    }
                    known.uncommitted = [:]
                }
            }
        }
    }
}

/// The one line a cart change touched, as the change left it, when the change knows it without reading
/// it back (``StoredRows/pricedLine(_:owner:productId:)`` would join the line, its product and category).
enum WrittenLine {
    /// Not known: read it.
    case unknown
    /// The line with its category's tax rate, or nil when the change removed it.
    case known((line: CartLine, taxRate: Int)?)
}
