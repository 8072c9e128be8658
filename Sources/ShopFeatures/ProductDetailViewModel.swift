import Observation
import Shop

/// One product: details, favourite mark, quantity stepper and add to cart.
///
/// The quantity stays within `1...min(maxPerOrder, stock) - inCart` (the units already in the cart count
/// against the per-order maximum and the stock); stepping past a bound is refused with an error (state
/// unchanged). A favourites outage shows the product with its favourite mark unknown. Feed: favourite and
/// cart changes made elsewhere apply at once; deleting the product fails the page; an order of this
/// product reloads it quietly (its stock changed); a change of the product (price, stock, text) shows at once.
///
/// Analytics: `productViewed` when the product first loads after ``appear()``, `quantityChanged` on each
/// step of the quantity, `favoriteAdded`/`favoriteRemoved` when a toggle is stored, `addedToCart` when an
/// add is stored; each names the session's shopper.
@MainActor @Observable
public final class ProductDetailViewModel {
    /// How long `didAddToCart` stays `true`.
    public static let addedFlagDuration = Duration.seconds(2)

    /// The product shown.
    public let productId: String
    // The shown properties are observed by hand (`access`, `withMutation`: what `@Observable` writes for a
    // stored property) over storage Observation ignores, so that a setter given the value already shown costs a
    // comparison: the feed's cart events, on every cart change, set a product page's units and quantity again,
    // mostly to what they were. A different value is a change of the state, reported (``stateDidChange``).
    // Each setter is written out: one generic setter taking the storage's key path cost 17k instructions more
    // per cart change with 100 screens open (the key paths were applied at run time, not folded).

    public private(set) var phase: Phase {
        get {
            access(keyPath: \.phase)
            return stored.phase
        }
        set {
            guard newValue != stored.phase else { return }
            withMutation(keyPath: \.phase) { stored.phase = newValue }
            stateDidChange?()
        }
    }
    public private(set) var product: Product? {
        get {
            access(keyPath: \.product)
            return stored.product
        }
        set {
            guard newValue != stored.product else { return }
            withMutation(keyPath: \.product) {
                stored.product = newValue
                // The form the state shows, made once per product, not per read.
                stored.info = newValue.map(ProductInfo.init)
            }
            stateDidChange?()
        }
    }
    /// Whether the product is a favourite; `nil` while unknown (the favourites could not be loaded).
    public private(set) var isFavorite: Bool? {
        get {
            access(keyPath: \.isFavorite)
            return stored.isFavorite
        }
        set {
            guard newValue != stored.isFavorite else { return }
            withMutation(keyPath: \.isFavorite) { stored.isFavorite = newValue }
            stateDidChange?()
        }
    }
    /// Units of this product already in the cart; `nil` while unknown (the cart could not be loaded).
    public private(set) var inCart: Int? {
        get {
            access(keyPath: \.inCart)
            return stored.inCart
        }
        set {
            guard newValue != stored.inCart else { return }
            withMutation(keyPath: \.inCart) { stored.inCart = newValue }
            stateDidChange?()
        }
    }
    public private(set) var quantity: Int {
        get {
            access(keyPath: \.quantity)
            return stored.quantity
        }
        set {
            guard newValue != stored.quantity else { return }
            withMutation(keyPath: \.quantity) { stored.quantity = newValue }
            stateDidChange?()
        }
    }
    /// Where adding to the cart stands: `submitting` while it runs, `succeeded` for 2 seconds after.
    /// An operational failure shows in `error` (the add goes back to `idle`).
    public private(set) var addToCartPhase: SubmitPhase {
        get {
            access(keyPath: \.addToCartPhase)
            return stored.addToCartPhase
        }
        set {
            guard newValue != stored.addToCartPhase else { return }
            withMutation(keyPath: \.addToCartPhase) { stored.addToCartPhase = newValue }
            stateDidChange?()
        }
    }
    /// Whether a favourite change is saving.
    public private(set) var isSavingFavorite: Bool {
        get {
            access(keyPath: \.isSavingFavorite)
            return stored.isSavingFavorite
        }
        set {
            guard newValue != stored.isSavingFavorite else { return }
            withMutation(keyPath: \.isSavingFavorite) { stored.isSavingFavorite = newValue }
            stateDidChange?()
        }
    }
    /// The last failed action, while the content stays loaded.
    public private(set) var actionError: ErrorInfo? {
        get {
            access(keyPath: \.actionError)
            return stored.actionError
        }
        set {
            guard newValue != stored.actionError else { return }
            withMutation(keyPath: \.actionError) { stored.actionError = newValue }
            stateDidChange?()
        }
    }
    /// Why part of the page is unknown (the favourite mark or the cart's units could not be loaded); shown
    /// in `error` when nothing else is, until that part is known again.
    public private(set) var partError: ErrorInfo? {
        get {
            access(keyPath: \.partError)
            return stored.partError
        }
        set {
            guard newValue != stored.partError else { return }
            withMutation(keyPath: \.partError) { stored.partError = newValue }
            stateDidChange?()
        }
    }

    /// Called after each change of what ``state`` reads (the shown properties above): set by a binding that
    /// sends the state when it changes, instead of observing the state's reads.
    @ObservationIgnored public var stateDidChange: (@MainActor () -> Void)?
    /// The storage of the shown properties.
    @ObservationIgnored private var stored = Stored()

    @ObservationIgnored private let catalog: any CatalogService
    @ObservationIgnored private let favorites: any FavoritesService
    @ObservationIgnored private let cart: any CartService
    @ObservationIgnored private let analytics: any AnalyticsService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private let session: ShopSession
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private var subscription: ShopSubscription?
    @ObservationIgnored private let load = ReplaceableLoad()
    /// Why the last load failed, to refuse actions with what is true (gone, or failed and retryable).
    @ObservationIgnored private var loadFailure: ShopError?
    @ObservationIgnored private var favoriteTask: MainActorTask<(any Error)?>?
    @ObservationIgnored private var addTask: MainActorTask<(any Error)?>?
    @ObservationIgnored private var addedFlagTask: Task<Void, Never>?
    /// Whether this opening recorded its view (once per ``appear()``).
    @ObservationIgnored private var recordedView = false
    @ObservationIgnored private let tasks = TaskBag()

    /// Creates the ViewModel; nothing loads before ``appear()``.
    public init(
        productId: String, catalog: any CatalogService, favorites: any FavoritesService, cart: any CartService,
        analytics: any AnalyticsService, events: ShopEvents, session: ShopSession, clock: any Clock<Duration>
    ) {
        self.productId = productId
        self.catalog = catalog
        self.favorites = favorites
        self.cart = cart
        self.analytics = analytics
        self.events = events
        self.session = session
        self.clock = clock
    }

    /// Creates the ViewModel from the service container.
    public convenience init(productId: String, services: ShopServices, session: ShopSession, clock: any Clock<Duration>) {
        self.init(productId: productId, catalog: services.catalog, favorites: services.favorites,
                  cart: services.cart, analytics: services.analytics, events: services.events, session: session, clock: clock)
    }

    // MARK: State

    /// The most units that can still be added: `min(maxPerOrder, stock)` less the units already in the
    /// cart (when known); 0 when not loaded.
    public var maxQuantity: Int {
        access(keyPath: \.product)
        access(keyPath: \.inCart)
        return stored.maxQuantity
    }
    /// `price * quantity`, when loaded.
    public var totalPrice: Money? { product.map { $0.price * quantity } }
    /// Whether the product is loaded and has no stock.
    public var isOutOfStock: Bool { product.map { !$0.isInStock } ?? false }
    /// Whether ``addToCart()`` would be accepted: loaded, in stock, not adding, and `quantity` fits beside
    /// what the cart holds.
    public var canAddToCart: Bool {
        phase == .loaded && !isOutOfStock && !isAddingToCart && (1...max(1, maxQuantity)).contains(quantity)
            && maxQuantity >= 1
    }
    /// Whether an add to cart is running.
    public var isAddingToCart: Bool { addToCartPhase == .submitting }
    /// Whether an add to cart succeeded in the last 2 seconds.
    public var didAddToCart: Bool { addToCartPhase == .succeeded }

    /// Whether ``toggleFavorite()`` would be accepted: loaded, the favourite mark known, no change saving.
    public var canToggleFavorite: Bool {
        phase == .loaded && isFavorite != nil && !isSavingFavorite
    }

    /// The whole state as one value.
    public var state: ProductDetailState {
        ProductDetailState(
            phase: phase.name, error: phase.error ?? actionError ?? partError, product: stored.info,
            isFavorite: isFavorite, canToggleFavorite: canToggleFavorite, inCart: inCart, quantity: quantity,
            maxQuantity: maxQuantity, totalPrice: totalPrice, canAddToCart: canAddToCart, isOutOfStock: isOutOfStock,
            isAddingToCart: isAddingToCart, didAddToCart: didAddToCart)
    }

    // MARK: Lifecycle

    /// Subscribes to the feed and loads the product, its favourite mark and the cart's units of it in
    /// parallel (phase becomes `loading` at once). Calling it again while open does nothing.
    public func appear() {
        guard subscription == nil else { return }
        subscription = events.subscribe { [weak self] in self?.handle($0) }
        recordedView = false
        startLoad()
    }

    /// Cancels every task and unsubscribes.
    public func close() {
        subscription?.cancel()
        subscription = nil
        addedFlagTask?.cancel()
        load.cancel()
        favoriteTask?.cancel()
        addTask?.cancel()
        tasks.cancelAll()
        if phase == .loading { phase = .idle }
    }

    // MARK: Intents

    /// Loads the product, its favourite mark and the cart's units of it again: the retry after a failed load.
    /// - Returns: `.superseded` when a newer refresh replaced this one.
    public func refresh() async -> IntentOutcome {
        await load.outcome(of: startLoad())
    }

    /// Adds one unit to the quantity.
    /// - Throws: ``ShopError`` `notReady`, `loadFailed`, `productNotFound`, `outOfStock`, or
    ///   `quantityExceedsStock` / `quantityExceedsMaximum` at the upper bound (counting the cart's units;
    ///   state unchanged).
    public func incrementQuantity() throws {
        let product = try loadedProduct()
        guard product.isInStock else { throw ShopError.outOfStock(product.id, name: product.name) }
        guard quantity < maxQuantity else {
            let requested = quantity + 1 + (inCart ?? 0)
            if product.stock < product.maxPerOrder {
                throw ShopError.quantityExceedsStock(product.id, name: product.name, requested: requested, available: product.stock)
            }
            throw ShopError.quantityExceedsMaximum(product.id, name: product.name, requested: requested, maximum: product.maxPerOrder)
        }
        quantity += 1
        record(.quantityChanged, quantity: quantity)
    }

    /// Removes one unit from the quantity.
    /// - Throws: ``ShopError`` `notReady`, `loadFailed`, `productNotFound`, or `invalidQuantity` at 1
    ///   (state unchanged).
    public func decrementQuantity() throws {
        _ = try loadedProduct()
        guard quantity > 1 else { throw ShopError.invalidQuantity(quantity - 1, minimum: 1) }
        quantity -= 1
        record(.quantityChanged, quantity: quantity)
    }

    /// Flips the favourite mark at once, saves it, and flips it back if saving fails.
    /// - Throws: ``ShopError`` `notReady`, `loadFailed` (the product, or the favourite mark, could not be
    ///   loaded), `alreadySubmitting` while a change is saving, or the service's refusal (reverted).
    ///   Operational failures are reverted and shown in `error`.
    public func toggleFavorite() async throws {
        _ = try loadedProduct()
        guard phase == .loaded else { throw ShopError.notReady }
        guard !isSavingFavorite else { throw ShopError.alreadySubmitting }
        guard let previous = isFavorite else {
            throw ShopError.loadFailed("favorites", message: "Whether this product is a favourite is unknown: favourites could not be loaded.", retryable: true)
        }
        let target = !previous
        isFavorite = target
        let task = MainActorTask(executorPreference: session.taskExecutor) { [weak self, favorites, productId, session] () -> (any Error)? in
            do {
                let shopper = try await session.write { shopper in
                    try await favorites.setFavorite(productId: productId, isFavorite: target, for: shopper)
                    return shopper
                }
                self?.record(target ? .favoriteAdded : .favoriteRemoved, by: shopper)
                self?.actionError = nil
            } catch {
                switch Failure(error) {
                case .cancelled:
                    self?.showFavorite(previous)
                    return CancellationError()
                case .refused(let error):
                    self?.showFavorite(previous)
                    return error
                case .operational(let info):
                    self?.showFavorite(previous)
                    self?.actionError = info
                }
            }
            return nil
        }
        favoriteTask = task
        isSavingFavorite = true
        let refusal = await task.valueCancellingWithCaller()
        favoriteTask = nil
        isSavingFavorite = false
        if let refusal { throw refusal }
    }

    /// Adds `quantity` units to the cart; on success `didAddToCart` is `true` for 2 seconds.
    /// - Throws: ``ShopError`` `notReady`, `loadFailed`, `productNotFound`, `outOfStock`,
    ///   `alreadySubmitting` while adding, or the cart's refusal such as `quantityExceedsMaximum`
    ///   (state unchanged). Operational failures are shown in `error`.
    public func addToCart() async throws {
        guard !isAddingToCart else { throw ShopError.alreadySubmitting }
        let product = try loadedProduct()
        guard phase == .loaded else { throw ShopError.notReady }
        guard product.isInStock else { throw ShopError.outOfStock(product.id, name: product.name) }
        addedFlagTask?.cancel()
        addToCartPhase = .submitting
        // Taken now, in the order the actions came: the cart's checkout waits for this add when it was
        // asked for after it, and this add waits for a checkout asked for before it.
        let turn = session.cartWrites.change()
        let task = MainActorTask(executorPreference: session.taskExecutor) { [weak self, cart, productId, quantity, session] () -> (any Error)? in
            var left: (shopper: Shopper, revision: Int64)?
            defer { session.cartWrites.end(turn, leaving: left) }
            if await session.cartWrites.turn(of: turn), Task.isCancelled {
                self?.addToCartPhase = .idle
                return CancellationError()
            }
            do {
                let (updated, shopper) = try await session.write { shopper in
                    (try await cart.add(productId: productId, quantity: quantity, for: shopper), shopper)
                }
                left = (shopper, updated.revision)
                guard let self else { return nil }
                self.record(.addedToCart, quantity: quantity, by: shopper)
                self.showCart(updated, of: shopper)
                self.actionError = nil
                self.showAddedFlag()
            } catch {
                self?.addToCartPhase = .idle
                return Failure.thrown(error) { self?.actionError = $0 }
            }
            return nil
        }
        addTask = task
        let refusal = await task.valueCancellingWithCaller()
        addTask = nil
        if let refusal { throw refusal }
    }

    // MARK: Loading

    /// The loaded product, or the refusal that says why there is none: still loading (`notReady`), gone
    /// or never existed (`productNotFound`), or the load failed (`loadFailed`; refresh to retry).
    private func loadedProduct() throws -> Product {
        if let product, phase == .loaded || phase == .loading { return product }
        guard case .failed(let message, let retryable) = phase else { throw ShopError.notReady }
        if let loadFailure, loadFailure.isRefusal { throw loadFailure }
        throw ShopError.loadFailed("product", message: "The product could not be loaded: \(message)", retryable: retryable)
    }

    /// Starts loading, replacing a load under way.
    /// - Returns: The task; its value is `true` when it showed the product or the failure.
    @discardableResult
    private func startLoad() -> Task<Bool, Never> {
        load.start(
            phase: .init(get: { [weak self] in self?.phase }, set: { [weak self] in self?.phase = $0 }),
            reloadAfterAbandon: { [weak self] in self?.reloadForFeed(includingProduct: true) }
        ) { [weak self, catalog, favorites, cart, productId, shopper = session.shopper] in
            async let product = catalog.product(id: productId)
            async let favorite = attempt { try await favorites.isFavorite(productId: productId, for: shopper) }
            async let cartNow = attempt { try await cart.cart(of: shopper) }
            do {
                let loaded = try await product
                let (isFavorite, cart) = await (favorite, cartNow)
                guard let self, !Task.isCancelled else { return false }
                // The session switched shopper meanwhile: its own reload shows the new one's parts.
                guard self.session.shopper == shopper else { return false }
                self.loadFailure = nil
                self.actionError = nil
                self.partError = nil
                // The product shows even when its favourite mark or the cart cannot be loaded: those parts
                // are unknown (null), the favourite toggle is unavailable, and `error` says why.
                switch isFavorite {
                case .success(let value): self.isFavorite = value
                case .failure(let error):
                    self.isFavorite = nil
                    self.partError = Failure.loadError(error)
                }
                switch cart {
                case .success(let cart): self.inCart = cart.line(for: productId)?.quantity ?? 0
                case .failure(let error):
                    self.inCart = nil
                    self.partError = self.partError ?? Failure.loadError(error)
                }
                self.show(loaded)
                self.phase = .loaded
                // A change that arrived meanwhile may not be in what this load read.
                if self.load.takeMissedChange() { self.reloadForFeed(includingProduct: true) }
                if !self.recordedView {
                    self.recordedView = true
                    self.record(.productViewed, by: shopper)
                }
            } catch {
                guard let self, !Task.isCancelled, let info = Failure.loadError(error) else { return false }
                self.loadFailure = error as? ShopError
                // A product that does not exist shows nothing of it (a page that found it gone, as one whose
                // deletion it was told of); a page left without its product shows none of the shopper's
                // parts of it either, whatever the feed showed while it loaded: as a fresh open shows it.
                if self.loadFailure?.reason == ShopError.Reason.productNotFound { self.product = nil }
                if self.product == nil { self.showNoParts() }
                self.phase = .failed(info)
            }
            return true
        }
    }

    /// Records an analytics event about this product, by `shopper` (the session's by default).
    private func record(_ kind: AnalyticsEvent.Kind, quantity: Int? = nil, by shopper: Shopper? = nil) {
        analytics.record(AnalyticsEvent(
            kind: kind, productId: productId, quantity: quantity, shopper: shopper ?? session.shopper, at: session.now()))
    }

    private func show(_ product: Product) {
        self.product = product
        clampQuantity()
    }

    /// Whether the page shows the shopper's parts of its product (favourite mark, units in the cart): not
    /// once it failed without its product (deleted, never existed, or its load failed), which a fresh open
    /// shows with both null; the feed's favourite and cart changes then leave them so.
    private var showsParts: Bool {
        if case .failed = stored.phase, stored.product == nil { return false }
        return true
    }

    /// Shows the favourite mark, on a page that shows the shopper's parts (``showsParts``).
    private func showFavorite(_ value: Bool?) {
        guard showsParts else { return }
        isFavorite = value
    }

    /// Shows none of the shopper's parts, and the quantity and add-to-cart of a page without a product.
    private func showNoParts() {
        isFavorite = nil
        inCart = nil
        partError = nil
        actionError = nil
        if addToCartPhase == .succeeded {
            addedFlagTask?.cancel()
            addToCartPhase = .idle
        }
        clampQuantity()
    }

    private func showCart(_ cart: Cart, of shopper: Shopper) {
        guard shopper == session.shopper, showsParts else { return }
        inCart = cart.line(for: productId)?.quantity ?? 0
        if stored.isFavorite != nil { partError = nil }
        clampQuantity()
    }

    /// Keeps `quantity` within `1...max(1, maxQuantity)`.
    private func clampQuantity() {
        // From the storage: a change's own reads need no observing (the cart's events run this on every page).
        quantity = min(max(1, stored.quantity), max(1, stored.maxQuantity))
    }

    private func showAddedFlag() {
        addToCartPhase = .succeeded
        addedFlagTask = Task { [weak self, clock] in
            do {
                try await clock.sleep(for: Self.addedFlagDuration)
                if self?.addToCartPhase == .succeeded { self?.addToCartPhase = .idle }
            } catch {}
        }
    }

    // MARK: Feed

    private func handle(_ event: ShopEvent) {
        switch event {
        case .favoriteChanged(let id, let value, let shopper) where id == productId && shopper == session.shopper:
            guard showsParts else { break }
            isFavorite = value
            if inCart != nil { partError = nil }
            // A load under way may have read the mark before: it reads again after.
            if phase == .loading { load.noteMissedChange(tracking: events) }
        case .cartChanged(let cart, let shopper):
            showCart(cart, of: shopper)
            if phase == .loading, shopper == session.shopper { load.noteMissedChange(tracking: events) }
        case .productsDeleted(let ids) where ids.contains(productId):
            // The page shows what a fresh open of the deleted product shows: no product, none of the
            // shopper's parts (the cart's change that removed its line, published next, leaves them so).
            load.cancel()
            tasks.cancelAll()  // reloads for earlier changes, which would show the product or its parts again
            product = nil
            loadFailure = .productGone(productId)
            phase = .failed(message: "This product is no longer available.", retryable: false)
            showNoParts()
        case .orderPlaced(let order, _) where phase == .loaded && order.lines.contains { $0.productId == productId }:
            // Its stock changed: reload it (tracked, so the answer of the checkout waits for it).
            events.track(tasks.run { [weak self, catalog, productId] in
                guard let product = try? await catalog.product(id: productId), !Task.isCancelled else { return }
                self?.show(product)
            })
        case .productChanged(let changed) where changed.id == productId && phase == .loaded:
            // Its price, stock or text changed (here or in another server): show it as stored.
            show(changed)
        case .resync where phase == .loaded:
            reloadForFeed(includingProduct: true)
        case .productChanged(let changed) where changed.id == productId && phase == .loading:
            // The load under way may have read before the change: it loads again after.
            load.noteMissedChange(tracking: events)
        case .orderPlaced(let order, _) where phase == .loading && order.lines.contains { $0.productId == productId }:
            load.noteMissedChange(tracking: events)
        case .resync where phase == .loading:
            load.noteMissedChange(tracking: events)
        case .sessionChanged where phase == .loaded, .shopperDataChanged(session.shopper) where phase == .loaded:
            reloadForFeed(includingProduct: false)
        case .sessionChanged where phase == .loading:
            // A load under way reads the last shopper's parts: start again for the new one.
            events.track(startLoad())
        default:
            break
        }
    }

    /// Loads again what the feed says may have changed: the session's favourite mark and cart units (the
    /// shopper's parts, unknown until loaded), and the product. Tracked, so an action's answer waits for it.
    private func reloadForFeed(includingProduct: Bool) {
        let shopper = session.shopper
        events.track(tasks.run { [weak self, catalog, favorites, cart, productId] in
            async let product = includingProduct ? try? catalog.product(id: productId) : nil
            async let favorite = attempt { try await favorites.isFavorite(productId: productId, for: shopper) }
            async let cartNow = attempt { try await cart.cart(of: shopper) }
            let (loaded, isFavorite, current) = await (product, favorite, cartNow)
            guard let self, !Task.isCancelled, self.session.shopper == shopper, self.showsParts else { return }
            if let loaded { self.show(loaded) }
            // The part error is this reload's: an earlier one's stays only if its part is still unknown.
            var favoriteError: ErrorInfo?
            switch isFavorite {
            case .success(let value): self.isFavorite = value
            case .failure(let error):
                favoriteError = Failure.loadError(error)
                self.isFavorite = nil
                self.partError = favoriteError
            }
            switch current {
            case .success(let cart): self.showCart(cart, of: shopper)
            case .failure(let error):
                self.inCart = nil
                self.partError = favoriteError ?? Failure.loadError(error)
            }
        })
    }
}

/// The result of `body`, success or failure, so that one of several parallel loads may fail alone.
private func attempt<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

extension ProductDetailViewModel {
    /// The storage of the shown properties, and the product's form.
    private struct Stored {
        var phase: Phase = .idle
        var product: Product? = nil
        var isFavorite: Bool? = nil
        var inCart: Int? = nil
        var quantity: Int = 1
        var addToCartPhase: SubmitPhase = .idle
        var isSavingFavorite: Bool = false
        var actionError: ErrorInfo? = nil
        var partError: ErrorInfo? = nil
        /// The product as the state shows it.
        var info: ProductInfo?

        /// ``ProductDetailViewModel/maxQuantity`` of these values.
        var maxQuantity: Int {
            guard let product else { return 0 }
            return max(0, product.purchasableQuantity - (inCart ?? 0))
        }
    }
}
