import Foundation
import Synchronization

/// The shop's change feed: the one place where committed changes are announced.
///
/// Live services publish after their transaction commits; ViewModels subscribe. Delivery is
/// synchronous on the main actor: ``publish(_:)`` calls every subscriber, in subscription order,
/// before it returns. A service call such as `cart.add` awaits its publish, so when it returns every
/// open ViewModel has already applied the change.
///
/// ```swift
/// let events = ShopEvents()
/// let subscription = events.subscribe { event in print(event) }
/// events.publish(.favoriteChanged(productId: "p-0001", isFavorite: true))   // prints at once
/// subscription.cancel()
/// ```
@MainActor
public final class ShopEvents {
    /// A subscriber.
    public typealias Handler = @MainActor @Sendable (ShopEvent) -> Void

    private nonisolated let registry = Registry()
    /// Work subscribers started because of an event (reloads of what they show), not yet finished.
    private var trackedWork = 0
    private var settledWaiters: [CheckedContinuation<Void, Never>] = []

    /// Whose data the sessions on this hub show, when they say (the server's hub); nil: a change feed reads
    /// every change, whoever's it is.
    public nonisolated let shownShoppers: ShownShoppers?

    /// Creates a feed with no subscribers. Callable from any isolation.
    /// - Parameter shownShoppers: where the sessions on this hub count whose data they show, so that a change
    ///   feed reads only those shoppers' changes (nil: every change is read).
    public nonisolated init(shownShoppers: ShownShoppers? = nil) {
        self.shownShoppers = shownShoppers
    }

    /// Delivers an event to every current subscriber, in subscription order, before returning.
    /// A subscriber cancelled by an earlier one during this delivery is skipped.
    public func publish(_ event: ShopEvent) {
        let (handlers, removals) = registry.handlers()
        for subscriber in handlers {
            // Looked up only once a subscriber was removed since the snapshot: a lookup per subscriber made
            // a delivery quadratic in the open ViewModels (~30k instructions per event with 100 open).
            if registry.removals != removals, !registry.isSubscribed(subscriber.id) { continue }
            subscriber.handler(event)
        }
    }

    /// Calls `handler` with every event published from now on.
    /// - Returns: A subscription; cancelling or releasing it unsubscribes.
    public func subscribe(_ handler: @escaping Handler) -> ShopSubscription {
        let id = registry.add(handler)
        return ShopSubscription { [weak registry] in registry?.remove(id) }
    }

    /// The events published from now on, as an asynchronous sequence. Events are buffered without
    /// limit; ending the iteration unsubscribes.
    public func events() -> AsyncStream<ShopEvent> {
        let (stream, continuation) = AsyncStream<ShopEvent>.makeStream()
        let subscription = subscribe { continuation.yield($0) }
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }

    /// The number of current subscribers.
    public var subscriberCount: Int { registry.count }

    // MARK: Work an event causes

    /// Counts `task` as work an event caused (a subscriber reloading what it shows), until it ends.
    ///
    /// An action's answer waits for ``settled()``, so everything its stored change causes on every open
    /// ViewModel, reloads included, is shown before the answer.
    public func track<Success: Sendable>(_ task: Task<Success, Never>) {
        trackedWork += 1
        Task { [weak self] in
            _ = await task.value
            self?.finishTracked()
        }
    }

    /// Returns once no tracked work remains (at once when none does).
    public func settled() async {
        guard trackedWork > 0 else { return }
        await withCheckedContinuation { settledWaiters.append($0) }
    }

    /// Whether tracked work is under way (for tests).
    public var isSettled: Bool { trackedWork == 0 }

    private func finishTracked() {
        trackedWork -= 1
        guard trackedWork == 0 else { return }
        let waiters = settledWaiters
        settledWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}

/// The subscribers, safe to change from any thread (a subscription may be released anywhere).
private final class Registry: Sendable {
    /// A subscriber. A struct, not a tuple: a closure in a tuple in an array is stored at the most general
    /// abstraction, and calling it went through a thunk that copied the event.
    struct Entry {
        let id: Int
        let handler: ShopEvents.Handler
    }

    private struct State {
        var nextId = 0
        var entries: [Entry] = []
    }

    private let state = Locked(State())
    /// How many subscribers were ever removed: a delivery that sees it unchanged since its snapshot knows
    /// every subscriber in the snapshot is still subscribed.
    private let removalCount = Atomic<Int>(0)

    func add(_ handler: @escaping ShopEvents.Handler) -> Int {
        state.withLock { state in
            state.nextId += 1
            state.entries.append(Entry(id: state.nextId, handler: handler))
            return state.nextId
        }
    }

    func remove(_ id: Int) {
        state.withLock { state in
            state.entries.removeAll { $0.id == id }
            // Under the lock, so that a snapshot taken after the removal also reads the count after it.
            removalCount.add(1, ordering: .sequentiallyConsistent)
        }
    }

    /// The subscribers now, and ``removals`` when they were taken.
    func handlers() -> (entries: [Entry], removals: Int) {
        state.withLock { ($0.entries, removalCount.load(ordering: .sequentiallyConsistent)) }
    }

    /// How many subscribers were ever removed.
    var removals: Int { removalCount.load(ordering: .sequentiallyConsistent) }

    func isSubscribed(_ id: Int) -> Bool {
        state.withLock { $0.entries.contains { $0.id == id } }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
