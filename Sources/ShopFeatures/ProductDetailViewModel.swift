import Observation
import Shop

/// One product: details, favourite mark, quantity stepper and add to cart.
///
/// The quantity stays within `1...min(maxPerOrder, stock)`; stepping past a bound is refused with an
/// error (state unchanged). Feed: favourite changes made elsewhere apply at once; deleting the product
/// fails the page; an order of this product reloads it quietly (its stock changed).
@MainActor @Observable
public final class ProductDetailViewModel {
    /// How long `didAddToCart` stays `true`.
    public static let addedFlagDuration = Duration.seconds(2)

    /// The product shown.
    public let productId: String
    public private(set) var phase: Phase = .idle
    public private(set) var product: Product?
    public private(set) var isFavorite = false
    public private(set) var quantity = 1
    /// Whether an add to cart is running.
    public private(set) var isAddingToCart = false
    public private(set) var didAddToCart = false
    /// The last failed action, while the content stays loaded.
    public private(set) var actionError: ErrorInfo?

    @ObservationIgnored private let catalog: any CatalogService
    @ObservationIgnored private let favorites: any FavoritesService
    @ObservationIgnored private let cart: any CartService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private var subscription: ShopSubscription?
    @ObservationIgnored private var loadTask: Task<Void, Never>?
    @ObservationIgnored private var favoriteTask: Task<ShopError?, Never>?
    @ObservationIgnored private var addTask: Task<ShopError?, Never>?
    @ObservationIgnored private var addedFlagTask: Task<Void, Never>?
    @ObservationIgnored private let tasks = TaskBag()

    /// Creates the ViewModel; nothing loads before ``appear()``.
    public init(
        productId: String, catalog: any CatalogService, favorites: any FavoritesService, cart: any CartService,
        events: ShopEvents, clock: any Clock<Duration>
    ) {
        self.productId = productId
        self.catalog = catalog
        self.favorites = favorites
        self.cart = cart
        self.events = events
        self.clock = clock
    }

    /// Creates the ViewModel from the service container.
    public convenience init(productId: String, services: ShopServices, clock: any Clock<Duration>) {
        self.init(productId: productId, catalog: services.catalog, favorites: services.favorites,
                  cart: services.cart, events: services.events, clock: clock)
    }

    // MARK: State

    /// The most units that can be added: `min(maxPerOrder, stock)`, 0 when not loaded.
    public var maxQuantity: Int { product?.purchasableQuantity ?? 0 }
    /// `price * quantity`, when loaded.
    public var totalPrice: Money? { product.map { $0.price * quantity } }
    /// Whether the product is loaded and has no stock.
    public var isOutOfStock: Bool { product.map { !$0.isInStock } ?? false }
    /// Whether ``addToCart()`` would be accepted.
    public var canAddToCart: Bool {
        phase == .loaded && !isOutOfStock && !isAddingToCart && (1...max(1, maxQuantity)).contains(quantity)
    }

    /// The whole state as one value.
    public var state: ProductDetailState {
        ProductDetailState(
            phase: phase.name, error: phase.error ?? actionError, product: product.map(ProductInfo.init),
            isFavorite: isFavorite, quantity: quantity, maxQuantity: maxQuantity, totalPrice: totalPrice,
            canAddToCart: canAddToCart, isOutOfStock: isOutOfStock, isAddingToCart: isAddingToCart,
            didAddToCart: didAddToCart)
    }

    // MARK: Lifecycle

    /// Subscribes to the feed and loads the product and its favourite mark in parallel (phase becomes
    /// `loading` at once). Calling it again while open does nothing.
    public func appear() {
        guard subscription == nil else { return }
        subscription = events.subscribe { [weak self] in self?.handle($0) }
        startLoad()
    }

    /// Cancels every task and unsubscribes.
    public func close() {
        subscription?.cancel()
        subscription = nil
        for task in [loadTask, addedFlagTask] { task?.cancel() }
        favoriteTask?.cancel()
        addTask?.cancel()
        tasks.cancelAll()
        if phase == .loading { phase = .idle }
    }

    // MARK: Intents

    /// Loads the product again.
    public func refresh() async {
        await startLoad().valueCancellingWithCaller()
    }

    /// Adds one unit to the quantity.
    /// - Throws: ``ShopError`` `notReady`, `outOfStock`, or `quantityExceedsStock` /
    ///   `quantityExceedsMaximum` at the upper bound (state unchanged).
    public func incrementQuantity() throws {
        guard let product else { throw ShopError.notReady }
        guard product.isInStock else { throw ShopError.outOfStock(product.id, name: product.name) }
        guard quantity < maxQuantity else {
            if product.stock < product.maxPerOrder {
                throw ShopError.quantityExceedsStock(product.id, name: product.name, requested: quantity + 1, available: product.stock)
            }
            throw ShopError.quantityExceedsMaximum(product.id, name: product.name, requested: quantity + 1, maximum: product.maxPerOrder)
        }
        quantity += 1
    }

    /// Removes one unit from the quantity.
    /// - Throws: ``ShopError`` `notReady`, or `invalidQuantity` at 1 (state unchanged).
    public func decrementQuantity() throws {
        guard product != nil else { throw ShopError.notReady }
        guard quantity > 1 else { throw ShopError.invalidQuantity(quantity - 1, minimum: 1) }
        quantity -= 1
    }

    /// Flips the favourite mark at once, saves it, and flips it back if saving fails.
    /// - Throws: ``ShopError`` `notReady`, `alreadySubmitting` while a change is saving, or the
    ///   service's refusal (reverted). Operational failures are reverted and shown in `error`.
    public func toggleFavorite() async throws {
        guard phase == .loaded else { throw ShopError.notReady }
        guard favoriteTask == nil else { throw ShopError.alreadySubmitting }
        let previous = isFavorite
        isFavorite.toggle()
        let target = isFavorite
        let task = Task { [weak self, favorites, productId] () -> ShopError? in
            do {
                try await favorites.setFavorite(productId: productId, isFavorite: target)
                self?.actionError = nil
            } catch {
                switch Failure(error) {
                case .cancelled: break
                case .refused(let error):
                    self?.isFavorite = previous
                    return error
                case .operational(let info):
                    self?.isFavorite = previous
                    self?.actionError = info
                }
            }
            return nil
        }
        favoriteTask = task
        let refusal = await task.valueCancellingWithCaller()
        favoriteTask = nil
        if let refusal { throw refusal }
    }

    /// Adds `quantity` units to the cart; on success `didAddToCart` is `true` for 2 seconds.
    /// - Throws: ``ShopError`` `notReady`, `outOfStock`, `alreadySubmitting` while adding, or the
    ///   cart's refusal such as `quantityExceedsStock` (state unchanged). Operational failures are
    ///   shown in `error`.
    public func addToCart() async throws {
        guard !isAddingToCart else { throw ShopError.alreadySubmitting }
        guard phase == .loaded, let product else { throw ShopError.notReady }
        guard product.isInStock else { throw ShopError.outOfStock(product.id, name: product.name) }
        isAddingToCart = true
        let task = Task { [weak self, cart, productId, quantity] () -> ShopError? in
            defer { self?.isAddingToCart = false }
            do {
                try await cart.add(productId: productId, quantity: quantity)
                guard let self else { return nil }
                self.actionError = nil
                self.showAddedFlag()
            } catch {
                return Failure.refusal(error) { self?.actionError = $0 }
            }
            return nil
        }
        addTask = task
        let refusal = await task.valueCancellingWithCaller()
        addTask = nil
        if let refusal { throw refusal }
    }

    // MARK: Loading

    @discardableResult
    private func startLoad() -> Task<Void, Never> {
        loadTask?.cancel()
        phase = .loading
        let task = Task { [weak self, catalog, favorites, productId] in
            do {
                async let product = catalog.product(id: productId)
                async let favorite = favorites.isFavorite(productId: productId)
                let (loaded, isFavorite) = try await (product, favorite)
                guard let self, !Task.isCancelled else { return }
                self.show(loaded)
                self.isFavorite = isFavorite
                self.phase = .loaded
            } catch {
                guard let self, !Task.isCancelled, let info = Failure.loadError(error) else { return }
                self.phase = .failed(info)
            }
        }
        loadTask = task
        return task
    }

    private func show(_ product: Product) {
        self.product = product
        quantity = min(max(1, quantity), max(1, product.purchasableQuantity))
    }

    private func showAddedFlag() {
        didAddToCart = true
        addedFlagTask?.cancel()
        addedFlagTask = Task { [weak self, clock] in
            do {
                try await clock.sleep(for: Self.addedFlagDuration)
                self?.didAddToCart = false
            } catch {}
        }
    }

    // MARK: Feed

    private func handle(_ event: ShopEvent) {
        switch event {
        case .favoriteChanged(let id, let value) where id == productId:
            isFavorite = value
        case .productsDeleted(let ids) where ids.contains(productId):
            loadTask?.cancel()
            product = nil
            phase = .failed(message: "This product is no longer available.", retryable: false)
        case .orderPlaced(let order) where phase == .loaded && order.lines.contains { $0.productId == productId }:
            tasks.run { [weak self, catalog, productId] in
                guard let product = try? await catalog.product(id: productId), !Task.isCancelled else { return }
                self?.show(product)
            }
        default:
            break
        }
    }
}
