import Shop

/// The order of one session's cart writes, as the client asked for them, whichever ViewModel asked.
///
/// A client may pipeline a product page's `addToCart` and the cart's `checkout` without waiting for the
/// add's answer: the checkout must take the cart the add leaves, and an add sent after the checkout must go
/// to the next cart, not into the order. Changes among themselves need no waiting (the store applies them
/// in the order they start); a checkout waits for every write asked for before it (changes and checkouts),
/// and a change asked for while a checkout is under way waits for that checkout to end. So the outcome of
/// pipelined writes depends only on their order, never on how fast each one ran: `add, checkout, add,
/// checkout` places two orders, and a second checkout sent by a double tap checks out the cart the first
/// left (`emptyCart`) instead of racing it.
///
/// Each write takes its ``Ticket`` when the action comes (synchronously, so in the order of the actions),
/// waits for its ``turn(of:)`` and ends with ``end(_:)`` however it went.
@MainActor
public final class CartWriteOrder {
    /// A write's place in the order.
    public struct Ticket: Sendable, Hashable {
        fileprivate let number: Int
        fileprivate let isCheckout: Bool
    }

    private var nextNumber = 0
    /// Writes asked for and not ended: whether each is a checkout, by number.
    private var underWay: [Int: Bool] = [:]
    /// The latest cart revision the session's own writes stored, by shopper.
    private var revisionsLeft: [Shopper: Int64] = [:]
    /// Writes waiting for their turn, in the order they began to wait.
    private var waiting: [(ticket: Ticket, resume: CheckedContinuation<Void, Never>)] = []

    /// An empty order.
    public init() {}

    /// Takes a change's place (an add, a quantity, a removal, clearing).
    public func change() -> Ticket {
        take(isCheckout: false)
    }

    /// Takes a checkout's place.
    public func checkout() -> Ticket {
        take(isCheckout: true)
    }

    /// Waits until the writes `ticket` must follow have ended: for a checkout, every write asked for
    /// before it; for a change, the checkouts asked for before it that are under way. Not cancellable:
    /// a write must not start before those it follows, cancelled or not.
    /// - Returns: Whether it waited (a caller then checks for cancellation before writing).
    @discardableResult
    public func turn(of ticket: Ticket) async -> Bool {
        guard !isReady(ticket) else { return false }
        await withCheckedContinuation { waiting.append((ticket, $0)) }
        return true
    }

    /// Ends a write, stored, refused or cancelled; writes waiting for it take their turn.
    /// - Parameter left: the shopper and the cart revision the write stored, when it stored one.
    public func end(_ ticket: Ticket, leaving left: (shopper: Shopper, revision: Int64)? = nil) {
        guard underWay.removeValue(forKey: ticket.number) != nil else { return }
        if let left, left.revision > revisionsLeft[left.shopper] ?? .min { revisionsLeft[left.shopper] = left.revision }
        let ready = waiting.filter { isReady($0.ticket) }
        waiting.removeAll { isReady($0.ticket) }
        for write in ready { write.resume.resume() }
    }

    /// The latest revision of `shopper`'s cart that the session's own writes stored: once a checkout's
    /// turn comes, what the writes asked for before it left (later ones wait for it).
    public func revisionLeft(by shopper: Shopper) -> Int64? {
        revisionsLeft[shopper]
    }

    /// How many checkouts wait for the writes asked for before them (for tests).
    public var checkoutsWaiting: Int { waiting.count(where: { $0.ticket.isCheckout }) }
    /// How many changes wait for a checkout to end (for tests).
    public var changesWaiting: Int { waiting.count(where: { !$0.ticket.isCheckout }) }

    private func take(isCheckout: Bool) -> Ticket {
        nextNumber += 1
        underWay[nextNumber] = isCheckout
        return Ticket(number: nextNumber, isCheckout: isCheckout)
    }

    private func isReady(_ ticket: Ticket) -> Bool {
        !underWay.contains { number, isCheckout in
            number < ticket.number && (ticket.isCheckout || isCheckout)
        }
    }
}
