import Foundation
import Observation
import Shop

/// The cart: lines, totals, changes and checkout.
///
/// The cart comes priced from the cart service (tax included), and follows the feed: a change made
/// anywhere (such as a product page's add to cart) is shown before that call returns. Of two copies
/// of the cart, the one with the higher `revision` wins, so a late answer never hides a newer change.
/// A checkout's outcome (`checkoutPhase`, `lastOrder`) stays until the cart changes again: a new change
/// starts a new checkout story. Lines removed because their product was deleted are named in `notices`
/// until the user's next change.
///
/// Analytics: `addedToCart` when an add is stored, `quantityChanged` when a line's new quantity is stored
/// (0 for a line removed that way), `checkout` (with the order's units) when an order is placed.
@MainActor @Observable
public final class CartViewModel {
    /// What the screen shows, held as one observed value: the binding reads all of it after every change,
    /// and observation costs per property read and per property tracked (each a key path hashed several
    /// times per change), so the cart's six properties are one. A change to any of them marks the
    /// screen changed, which is what the binding needs.
    private var shown = Shown() {
        didSet { stateDidChange?() }
    }

    /// Called after each change of what ``state`` reads (the shown properties, and the session's capped lines):
    /// set by a binding that sends the state when it changes, instead of observing the state's reads (which
    /// Observation registers again after every change: for a cart screen, as costly as its patch).
    @ObservationIgnored public var stateDidChange: (@MainActor () -> Void)?
    /// Whether a change of the session's capped lines will be reported; armed again by the first read of
    /// ``state`` after one.
    @ObservationIgnored private var watchingCappedLines = false

    /// The stored form of the shown properties.
    private struct Shown {
        var phase: Phase = .idle
        var cart: Cart?
        var checkoutPhase: SubmitPhase = .idle
        var lastOrder: Order?
        var actionError: ErrorInfo?
        var notices: [CartNotice] = []
    }

    public private(set) var phase: Phase {
        get { shown.phase }
        set { shown.phase = newValue }
    }
    public private(set) var cart: Cart? {
        get { shown.cart }
        set { shown.cart = newValue }
    }
    public private(set) var checkoutPhase: SubmitPhase {
        get { shown.checkoutPhase }
        set { shown.checkoutPhase = newValue }
    }
    public private(set) var lastOrder: Order? {
        get { shown.lastOrder }
        set { shown.lastOrder = newValue }
    }
    /// The last failed change, while the cart stays shown.
    public private(set) var actionError: ErrorInfo? {
        get { shown.actionError }
        set { shown.actionError = newValue }
    }
    /// Lines that went without the user removing them, and why; cleared by the user's next change.
    public private(set) var notices: [CartNotice] {
        get { shown.notices }
        set { shown.notices = newValue }
    }

    @ObservationIgnored private let cartService: any CartService
    @ObservationIgnored private let orders: any OrderService
    @ObservationIgnored private let analytics: any AnalyticsService
    @ObservationIgnored private let events: ShopEvents
    /// The load that prices the cart again after its products changed, while one runs.
    @ObservationIgnored private var priceReload: Task<Void, Never>?
    /// Products changed while `priceReload` ran: it loads once more.
    @ObservationIgnored private var priceReloadAgain = false
    @ObservationIgnored private let session: ShopSession
    /// The cart revision shown when the last checkout ended; a newer one starts a new checkout story.
    @ObservationIgnored private var checkoutEndRevision: Int64?
    @ObservationIgnored private let load = ReplaceableLoad()
    @ObservationIgnored private var subscription: ShopSubscription?
    @ObservationIgnored private var checkoutTask: MainActorTask<Result<Order?, any Error>>?
    @ObservationIgnored private var changeTasks: [Int: MainActorTask<(any Error)?>] = [:]
    /// How many checkouts wait for the cart writes asked for before them (for tests).
    var checkoutsWaiting: Int { session.cartWrites.checkoutsWaiting }
    /// How many changes wait for a checkout to end (for tests).
    var changesWaitingForCheckout: Int { session.cartWrites.changesWaiting }
    @ObservationIgnored private var nextChangeId = 0

    /// Creates the ViewModel; nothing loads before ``appear()``.
    /// - Parameter session: whose cart it shows (a guest's own, or the signed-in account's).
    public init(
        cart: any CartService, orders: any OrderService, analytics: any AnalyticsService, events: ShopEvents,
        session: ShopSession
    ) {
        self.cartService = cart
        self.orders = orders
        self.analytics = analytics
        self.events = events
        self.session = session
    }

    /// Creates the ViewModel from the service container.
    public convenience init(services: ShopServices, session: ShopSession) {
        self.init(cart: services.cart, orders: services.orders, analytics: services.analytics, events: services.events,
                  session: session)
    }

    // MARK: State

    /// The shown lines.
    public var lines: [CartLine] { cart?.lines ?? [] }
    /// Units, subtotal, tax and total of the shown cart; zero before it loads.
    public var totals: CartTotals { CartTotals(cart ?? .empty) }

    /// The whole state as one value.
    ///
    /// Reads the observed values once each (``shown`` and the session's capped lines): every read is recorded
    /// by any observation tracking around it (the binding's in debug builds, which check ``stateDidChange``),
    /// which hashes a key path each time.
    public var state: CartState {
        let shown = shown, capped = watchedCappedLines()
        return CartState(
            phase: shown.phase.name, error: shown.phase.error ?? shown.actionError,
            lines: (shown.cart?.lines ?? []).map(CartLineSnapshot.init), totals: CartTotals(shown.cart ?? .empty),
            checkoutPhase: shown.checkoutPhase.name, checkoutError: shown.checkoutPhase.error,
            lastOrder: shown.lastOrder.map(OrderSnapshot.init),
            notices: capped.isEmpty ? shown.notices : shown.notices + capped.map(CartNotice.init(capped:)))
    }

    /// The session's capped lines, watched until they change: their change is reported as one of the state's
    /// (Observation calls back once, before the change; the state is read after it). A closed screen's watch
    /// stays registered in the session until the lines next change (it holds the screen weakly).
    private func watchedCappedLines() -> [CappedLine] {
        guard !watchingCappedLines else { return session.cappedLines }
        watchingCappedLines = true
        return withObservationTracking { session.cappedLines } onChange: { [weak self] in
            // On the main actor: the session changes there.
            MainActor.assumeIsolated {
                self?.watchingCappedLines = false
                self?.stateDidChange?()
            }
        }
    }

    // MARK: Lifecycle

    /// Subscribes to the feed and loads the cart (phase becomes `loading` at once).
    /// Calling it again while open does nothing.
    public func appear() {
        guard subscription == nil else { return }
        subscription = events.subscribe { [weak self] in self?.handle($0) }
        startLoad()
    }

    /// Cancels every task and unsubscribes.
    public func close() {
        subscription?.cancel()
        subscription = nil
        load.cancel()
        checkoutTask?.cancel()
        for task in changeTasks.values { task.cancel() }
        changeTasks = [:]
        priceReload?.cancel()
        priceReload = nil
        priceReloadAgain = false
        if phase == .loading { phase = .idle }
    }

    // MARK: Intents

    /// Loads the cart again (after a failed load, or to be sure it is current).
    /// - Returns: `.superseded` when a newer refresh replaced this one.
    public func refresh() async -> IntentOutcome {
        await load.outcome(of: startLoad())
    }

    /// Forgets the notices about lines that went or were capped.
    public func dismissNotices() {
        notices = []
        session.dismissCappedLines()
    }

    /// Adds units of a product, merging with its line.
    /// - Throws: ``ShopError`` `invalidQuantity` (below 1) or the cart's refusal (`productNotFound`,
    ///   `outOfStock`, `quantityExceedsStock`, `quantityExceedsMaximum`); the cart does not change.
    public func add(productId: String, quantity: Int) async throws {
        guard quantity >= 1 else { throw ShopError.invalidQuantity(quantity, minimum: 1) }
        try await change(recording: { AnalyticsEvent(kind: .addedToCart, productId: productId, quantity: quantity, shopper: $0, at: $1) }) {
            try await $0.add(productId: productId, quantity: quantity, for: $1)
        }
    }

    /// Sets a line's quantity; 0 removes the line.
    ///
    /// Whether the line exists is the store's to say, not the cart shown: a change still on its way
    /// (an `add` just before, not yet applied) may have created it.
    /// - Throws: ``ShopError`` `invalidQuantity` (negative), `notInCart`, `quantityExceedsStock` or
    ///   `quantityExceedsMaximum`; the cart does not change.
    public func setQuantity(productId: String, quantity: Int) async throws {
        guard quantity >= 0 else { throw ShopError.invalidQuantity(quantity, minimum: 0) }
        try await change(recording: { AnalyticsEvent(kind: .quantityChanged, productId: productId, quantity: quantity, shopper: $0, at: $1) }) {
            try await $0.setQuantity(productId: productId, quantity: quantity, for: $1)
        }
    }

    /// Removes a line (the store decides whether it exists, as for ``setQuantity(productId:quantity:)``).
    /// - Throws: ``ShopError`` `notInCart`.
    public func remove(productId: String) async throws {
        try await change { try await $0.remove(productId: productId, for: $1) }
    }

    /// Empties the cart.
    public func clear() async throws {
        try await change { try await $0.clear(for: $1) }
    }

    /// Places the order through the order service; on success `lastOrder` holds it and the cart is empty.
    /// Cart changes of the session asked for before it and still running (on this screen, another cart
    /// screen or a product page) are waited for: it checks out the cart they leave (a client may pipeline
    /// `add` and `checkout` without waiting for the add's answer); changes asked for while it runs start
    /// after it, on the cart the order emptied. A checkout asked for while another runs waits for it, and
    /// checks out the cart as it is then (`emptyCart` after a double tap).
    /// - Returns: The order placed, or nil when the checkout failed operationally (`checkoutPhase`
    ///   `failed`). Returned rather than read from `lastOrder` afterwards: a change that comes meanwhile
    ///   starts a new checkout story, which clears `lastOrder` before this returns.
    /// - Throws: ``ShopError`` `signInRequired` for a guest, `notReady` while loading, `loadFailed` when the
    ///   cart could not be loaded, `emptyCart`, or the order service's refusal (such as `quantityExceedsStock`
    ///   naming the line in `details.productId`); nothing changes. Operational failures show as
    ///   `checkoutPhase` `failed`.
    @discardableResult
    public func checkout() async throws -> Order? {
        // Whose cart, and which revision of it, as the checkout is asked for: a sign-out or another
        // session's change while it waits its turn must not make it check out another cart.
        let shopper = session.shopper
        guard session.isSignedIn else { throw ShopError.signInRequired("check out") }
        let askedRevision = cart?.revision
        // Changes asked for before the checkout, here or on a product page (a client that pipelines does
        // not wait for their answers), belong to the cart it checks out: it waits for them (and for an
        // earlier checkout) and checks out the cart they leave. Changes asked for while it runs wait for
        // it (see `CartWriteOrder`).
        let turn = session.cartWrites.checkout()
        var left: (shopper: Shopper, revision: Int64)?
        defer { session.cartWrites.end(turn, leaving: left) }
        if await session.cartWrites.turn(of: turn) {
            try Task.checkCancellation()
            // Closed while it waited: the screen went away, and its checkout with it.
            guard subscription != nil else { throw CancellationError() }
            guard session.shopper == shopper else { throw ShopError.signInRequired("check out") }
        }
        guard let cart else {
            if case .failed(let message, let retryable) = phase {
                throw ShopError.loadFailed("cart", message: "The cart could not be loaded: \(message)", retryable: retryable)
            }
            throw ShopError.notReady
        }
        // A keyed retry of a checkout that emptied the cart is the store's to answer (it replays the order).
        guard !cart.isEmpty || IdempotencyKey.current != nil else { throw ShopError.emptyCart }
        let previousPhase = checkoutPhase
        checkoutPhase = .submitting
        // The cart the client was shown when it asked, or the one its own earlier writes left: not one that
        // changed meanwhile by other means (a price change, another server, a checkout refused before this
        // one), which the store then refuses as `cartChanged` rather than charging what was never shown.
        let shownRevision = [askedRevision, session.cartWrites.revisionLeft(by: shopper)].compactMap { $0 }.max() ?? cart.revision
        let task = MainActorTask(executorPreference: session.taskExecutor) { [weak self, cartService, orders, session] () -> Result<Order?, any Error> in
            do {
                // The cart the customer was shown, or nothing: another session may have changed it.
                let order = try await session.write(as: shopper, to: "check out") {
                    try await orders.placeOrder(expectedRevision: shownRevision, for: shopper)
                }
                self?.analytics.record(AnalyticsEvent(
                    kind: .checkout, quantity: order.itemCount, shopper: shopper, at: session.now()))
                guard let self else { return .success(order) }
                if self.cart?.isEmpty == false, !Task.isCancelled {
                    // No feed event emptied the cart (a service without a feed): ask for it.
                    if let cart = try? await cartService.cart(of: shopper) { self.apply(cart, of: shopper) }
                }
                self.lastOrder = order
                self.notices = []
                self.checkoutPhase = .succeeded
                self.checkoutEndRevision = self.cart?.revision
                return .success(order)
            } catch {
                switch Failure(error) {
                case .cancelled:
                    self?.checkoutPhase = previousPhase
                    return .failure(CancellationError())
                case .refused(let error):
                    self?.checkoutPhase = previousPhase
                    if error.reason == ShopError.Reason.cartChanged, let cart = try? await cartService.cart(of: shopper) {
                        self?.apply(cart, of: shopper)  // show the cart as it is now
                    }
                    return .failure(error)
                case .operational(let info):
                    self?.checkoutPhase = .failed(info)
                    self?.checkoutEndRevision = self?.cart?.revision
                    return .success(nil)
                }
            }
        }
        checkoutTask = task
        let outcome = await task.valueCancellingWithCaller()
        checkoutTask = nil
        // The emptied cart the order left is what a checkout asked for after this one may check out.
        if case .success(.some) = outcome, let emptied = self.cart?.revision { left = (shopper, emptied) }
        return try outcome.get()
    }

    // MARK: Changes

    /// Runs a cart change of the session's shopper as an owned task; applies the cart it returns (unless
    /// the session switched shopper meanwhile). Once the change is stored, records the analytics event that
    /// `recording` makes (if any) from the shopper it was stored for and the time.
    private func change(
        recording event: (@Sendable (Shopper, Date) -> AnalyticsEvent)? = nil,
        _ operation: @escaping @Sendable (any CartService, Shopper) async throws -> Cart
    ) async throws {
        nextChangeId += 1
        let id = nextChangeId
        // Taken now, in the order the actions came: a change asked for after a checkout waits for it.
        let turn = session.cartWrites.change()
        let task = MainActorTask(executorPreference: session.taskExecutor) { [weak self, cartService, session] () -> (any Error)? in
            var left: (shopper: Shopper, revision: Int64)?
            defer { session.cartWrites.end(turn, leaving: left) }
            if await session.cartWrites.turn(of: turn), Task.isCancelled { return CancellationError() }
            do {
                // The shopper when the write runs: a sign-in under way moves the guest's lines first.
                let (cart, shopper) = try await session.write { shopper in (try await operation(cartService, shopper), shopper) }
                left = (shopper, cart.revision)
                if let event { self?.analytics.record(event(shopper, session.now())) }
                guard let self, self.session.shopper == shopper else { return nil }
                self.apply(cart, of: shopper)
                if self.actionError != nil { self.actionError = nil }
                if !self.notices.isEmpty { self.notices = [] }
                self.session.dismissCappedLines()
            } catch {
                return Failure.thrown(error) { self?.actionError = $0 }
            }
            return nil
        }
        changeTasks[id] = task
        let refusal = await task.valueCancellingWithCaller()
        changeTasks[id] = nil
        if let refusal { throw refusal }
    }

    /// Shows `cart`, the cart of `shopper`, unless the session shops as someone else now or a newer revision
    /// is shown already. A cart newer than the one the last checkout ended on starts a new checkout story.
    private func apply(_ cart: Cart, of shopper: Shopper) {
        guard shopper == session.shopper else { return }
        if let shown = self.cart, shown.revision > cart.revision { return }
        // The cart shown already (a change's answer after its feed event showed it): setting it again
        // would only cost the observation's bookkeeping.
        if phase == .loaded, self.cart == cart { return }
        self.cart = cart
        if let ended = checkoutEndRevision, cart.revision > ended {
            checkoutEndRevision = nil
            checkoutPhase = .idle
            lastOrder = nil
        }
        // A load under way goes on: its cart, if older, is ignored above.
        if phase != .loaded { phase = .loaded }
    }

    /// Starts loading the cart, replacing a load under way.
    /// - Returns: The task; its value is `true` when it showed its cart or its failure.
    @discardableResult
    private func startLoad() -> Task<Bool, Never> {
        load.start(phase: .init(get: { [weak self] in self?.phase }, set: { [weak self] in self?.phase = $0 })) {
            [weak self, cartService, shopper = session.shopper] in
            do {
                let cart = try await cartService.cart(of: shopper)
                guard let self, !Task.isCancelled else { return false }
                self.apply(cart, of: shopper)
            } catch {
                guard let self, !Task.isCancelled, let info = Failure.loadError(error) else { return false }
                self.phase = .failed(info)
            }
            return true
        }
    }

    // MARK: Feed

    private func handle(_ event: ShopEvent) {
        guard subscription != nil else { return }
        switch event {
        case .cartChanged(let cart, let shopper):
            apply(cart, of: shopper)
        case .productsDeleted(let ids):
            // Published before the cart without those lines: name the lines that are about to go.
            let deleted = Set(ids)
            for line in lines where deleted.contains(line.productId) && !notices.contains(where: { $0.productId == line.productId }) {
                notices.append(CartNotice(productDeleted: line))
            }
        case .productChanged(let product) where lines.contains(where: { $0.productId == product.id }):
            // A line's unit price is the product's current price (what checkout charges): load the cart
            // as it is now, priced again.
            reloadForPriceChange()
        case .resync:
            reloadForFeed()
        case .shopperDataChanged(let shopper) where shopper == session.shopper:
            reloadForFeed()
        case .sessionChanged:
            // Another shopper's cart: nothing of the last one's stays (revisions are per cart).
            cart = nil
            notices = []
            actionError = nil
            checkoutEndRevision = nil
            checkoutPhase = .idle
            lastOrder = nil
            events.track(startLoad())
        default:
            break
        }
    }

    /// Loads the cart priced again after a product in it changed: one load at a time, changes arriving
    /// meanwhile read by one more (a market simulation changes prices many times a second). Tracked, so
    /// an action's answer waits for it.
    private func reloadForPriceChange() {
        if priceReload != nil {
            priceReloadAgain = true
            return
        }
        let task = Task { [weak self, cartService, shopper = session.shopper] in
            repeat {
                self?.priceReloadAgain = false
                guard let cart = try? await cartService.cart(of: shopper), !Task.isCancelled else { break }
                self?.apply(cart, of: shopper)
            } while self?.priceReloadAgain == true && !Task.isCancelled
            if !Task.isCancelled { self?.priceReload = nil }
        }
        priceReload = task
        events.track(task)
    }

    /// Loads the cart as it is after changes were missed (tracked, so an action's answer waits for it).
    private func reloadForFeed() {
        events.track(Task { [weak self, cartService, shopper = session.shopper] in
            guard let cart = try? await cartService.cart(of: shopper), !Task.isCancelled else { return }
            self?.apply(cart, of: shopper)
        })
    }
}
