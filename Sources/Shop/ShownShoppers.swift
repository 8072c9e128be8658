/// Whose data one server process shows: the shoppers of its sessions (a connection's session is one shopper at
/// a time, a guest until it signs in).
///
/// A change feed reads another process's change of one shopper's data (a cart, an account, the count of an
/// inbox) only when a session here shows that shopper: every ViewModel that shows such data shows its own
/// session's, and ignores the events of other shoppers. So a change costs each server that does not show its
/// shopper one log entry to skip, not a read; with many servers on one database, the reads of a write no longer
/// grow with the number of servers. Changes everyone shows (products, stock, orders) are read as before.
///
/// A session counts its shopper as shown before its ViewModels load that shopper's data (``show(_:)``), so a
/// change skipped before then was committed before the load, which reads it.
///
/// ```swift
/// let shown = ShownShoppers()
/// let events = ShopEvents(shownShoppers: shown)   // the server's hub; each ShopSession on it shows its shopper
/// shown.contains(.guest("g-1"))                    // false until a session is that guest
/// ```
public final class ShownShoppers: Sendable {
    /// How many sessions show each shopper.
    private let counts = Locked<[Shopper: Int]>([:])

    /// No shopper shown.
    public init() {}

    /// Counts one more session showing `shopper`.
    public func show(_ shopper: Shopper) {
        counts.withLock { $0[shopper, default: 0] += 1 }
    }

    /// Counts one session fewer showing `shopper`.
    public func hide(_ shopper: Shopper) {
        counts.withLock { counts in
            guard let count = counts[shopper] else { return }
            counts[shopper] = count > 1 ? count - 1 : nil
        }
    }

    /// Counts a session that showed `old` as showing `new`: `new` first, so that a shopper both are (or that
    /// another session shows) is never uncounted meanwhile.
    public func switchShown(from old: Shopper, to new: Shopper) {
        show(new)
        hide(old)
    }

    /// Whether a session shows `shopper`.
    public func contains(_ shopper: Shopper) -> Bool {
        counts.withLock { $0[shopper] != nil }
    }
}
