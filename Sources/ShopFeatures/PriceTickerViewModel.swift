import Observation
import Shop

/// One product's price and stock, live: the current values and the last 100 of its price history.
///
/// Opening connects: the product and its history load and every stored change of the product (from this
/// or another server: a product edit, a market simulation, an order's stock) shows, loaded with its
/// history (the current price is then the history's last point). Changes that arrive while that load
/// runs coalesce into one more load, so a fast stream costs at most one load at a time. `disconnect()` stops following (the state stays as it was; every task is cancelled);
/// `connect()` loads again and follows again. A deleted product fails the ticker.
@MainActor @Observable
public final class PriceTickerViewModel {
    /// The most history points shown.
    public static let historyLength = 100

    /// The product followed.
    public let productId: String
    public private(set) var phase: Phase = .idle
    public private(set) var product: Product?
    /// Oldest first, at most ``historyLength``.
    public private(set) var priceHistory: [PricePoint] = []
    public private(set) var isConnected = false

    @ObservationIgnored private let catalog: any CatalogService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private var subscription: ShopSubscription?
    @ObservationIgnored private let load = ReplaceableLoad()
    /// The load following stored changes, while one runs.
    @ObservationIgnored private var followTask: Task<Void, Never>?
    /// Changes arrived while `followTask` ran: it loads once more.
    @ObservationIgnored private var followAgain = false

    /// Creates the ViewModel; nothing loads before ``appear()``.
    public init(productId: String, catalog: any CatalogService, events: ShopEvents) {
        self.productId = productId
        self.catalog = catalog
        self.events = events
    }

    /// Creates the ViewModel from the service container.
    public convenience init(productId: String, services: ShopServices) {
        self.init(productId: productId, catalog: services.catalog, events: services.events)
    }

    // MARK: State

    /// The whole state as one value.
    public var state: PriceTickerState {
        PriceTickerState(
            phase: phase.name, error: phase.error, productId: productId, name: product?.name ?? "",
            currentPrice: product?.price, stock: product?.stock, priceHistory: priceHistory.map(PricePointSnapshot.init),
            isConnected: isConnected)
    }

    // MARK: Lifecycle

    /// Connects (see ``connect()``).
    public func appear() {
        connect()
    }

    /// Disconnects: every task is cancelled and nothing is followed any more.
    public func close() {
        disconnect()
    }

    // MARK: Intents

    /// Loads the product and its history and follows their stored changes; does nothing when connected.
    public func connect() {
        guard !isConnected else { return }
        isConnected = true
        subscription = events.subscribe { [weak self] in self?.handle($0) }
        startLoad()
    }

    /// Stops following: unsubscribes and cancels every load; what is shown stays.
    public func disconnect() {
        isConnected = false
        subscription?.cancel()
        subscription = nil
        load.cancel()
        followTask?.cancel()
        followTask = nil
        followAgain = false
        if phase == .loading { phase = product == nil ? .idle : .loaded }
    }

    /// Loads the product and its history again (connected or not).
    /// - Returns: `.superseded` when a newer load replaced this one.
    public func refresh() async -> IntentOutcome {
        await load.outcome(of: startLoad())
    }

    // MARK: Loading

    @discardableResult
    private func startLoad() -> Task<Bool, Never> {
        load.start(
            phase: .init(get: { [weak self] in self?.phase }, set: { [weak self] in self?.phase = $0 }),
            reloadAfterAbandon: { [weak self] in self?.followStoredChanges() }
        ) {
            [weak self, catalog, productId] in
            do {
                async let product = catalog.product(id: productId)
                async let history = catalog.priceHistory(productId: productId, limit: Self.historyLength)
                let (loadedProduct, loadedHistory) = try await (product, history)
                guard let self, !Task.isCancelled else { return false }
                self.product = loadedProduct
                self.priceHistory = loadedHistory
                self.phase = .loaded
                if self.load.takeMissedChange() { self.followStoredChanges() }
            } catch {
                guard let self, !Task.isCancelled, let info = Failure.loadError(error) else { return false }
                self.phase = .failed(info)
            }
            return true
        }
    }

    /// Loads the product and its history as stored now; changes arriving meanwhile make it load once more
    /// after (one load at a time, however fast they come). Tracked, so the answer of an action whose
    /// change caused it waits for it.
    private func followStoredChanges() {
        if followTask != nil {
            followAgain = true
            return
        }
        let task = Task { [weak self, catalog, productId] in
            repeat {
                self?.followAgain = false
                do {
                    async let product = catalog.product(id: productId)
                    async let history = catalog.priceHistory(productId: productId, limit: Self.historyLength)
                    let (loadedProduct, loadedHistory) = try await (product, history)
                    guard let self, !Task.isCancelled else { return }
                    self.product = loadedProduct
                    self.priceHistory = loadedHistory
                } catch {
                    // A failed follow-up keeps what is shown; a deletion arrives as its own event.
                    if Task.isCancelled { return }
                }
            } while self?.followAgain == true && !Task.isCancelled
            if !Task.isCancelled { self?.followTask = nil }  // a cancelled one was already forgotten
        }
        followTask = task
        events.track(task)
    }

    // MARK: Feed

    /// Follows a stored change: at once when loaded; after the load under way (which may have read
    /// before the change) when loading.
    private func followOrNoteChange() {
        switch phase {
        case .loaded: followStoredChanges()
        case .loading: load.noteMissedChange(tracking: events)
        case .idle, .failed: break
        }
    }

    private func handle(_ event: ShopEvent) {
        guard isConnected else { return }
        switch event {
        case .productChanged(let changed) where changed.id == productId:
            // Shown with the history that ends with it (one load, which also coalesces a burst): the
            // current price and the history's last point move together, and a burst costs one patch.
            followOrNoteChange()
        case .orderPlaced(let order, _) where order.lines.contains { $0.productId == productId }:
            followOrNoteChange()
        case .resync:
            followOrNoteChange()
        case .productsDeleted(let ids) where ids.contains(productId):
            load.cancel()
            followTask?.cancel()
            followTask = nil
            product = nil
            priceHistory = []
            phase = .failed(message: "This product is no longer available.", retryable: false)
        default:
            break
        }
    }
}
