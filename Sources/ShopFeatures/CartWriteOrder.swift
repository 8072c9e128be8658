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
    /// The numbers of the writes asked for and not ended, in increasing order (numbers are taken in
    /// increasing order, so taking one appends it): whether a write may start asks only for the smallest.
    private var underWay: [Int] = []
    /// The numbers of the checkouts among them, in increasing order.
    private var checkoutsUnderWay: [Int] = []
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
        guard Self.remove(ticket.number, from: &underWay) else { return }
        if ticket.isCheckout { Self.remove(ticket.number, from: &checkoutsUnderWay) }
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
        underWay.append(nextNumber)
        if isCheckout { checkoutsUnderWay.append(nextNumber) }
        return Ticket(number: nextNumber, isCheckout: isCheckout)
    }

    /// Whether no write `ticket` must follow is under way: for a checkout, no write with a smaller number;
    /// for a change, no checkout with a smaller number. Constant time, where scanning every write under way
    /// took 2 500 steps for a pipelined burst of 50 adds (`end` still removes from an array and looks through
    /// the writes waiting: linear, in the few writes under way). Tickets must come from this order.
    private func isReady(_ ticket: Ticket) -> Bool {
        let earliest = ticket.isCheckout ? underWay.first : checkoutsUnderWay.first
        return earliest.map { $0 >= ticket.number } ?? true
    }

    /// Removes `number` from the increasing `numbers` (binary search); whether it was there.
    @discardableResult
    private static func remove(_ number: Int, from numbers: inout [Int]) -> Bool {
        var low = 0, high = numbers.count
        while low < high {
            let middle = (low + high) / 2
            if numbers[middle] < number { low = middle + 1 } else { high = middle }
        }
        guard low < numbers.count, numbers[low] == number else { return false }
        numbers.remove(at: low)
        return true
    }
}
