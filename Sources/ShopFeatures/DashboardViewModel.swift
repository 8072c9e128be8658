import Foundation
import Observation
import Shop

/// The home screen: featured products, categories with counts, recent orders, recommendations and
/// trending products, each loading (and failing) on its own.
///
/// Feed: a placed order joins `recentOrders` at once and refreshes `recommended`; a changed product shows
/// its new price, stock and text wherever listed (out of stock, it leaves `recommended`), and one moved
/// to another category refreshes `categories` and `recommended`; created and deleted products refresh
/// `featured`, `categories` and `recommended` (and deletions `trending`); a product back in stock and
/// favourite changes refresh `recommended`. `recommended` is chosen by the categories of the shopper's
/// favourites and orders, among products in stock, featured and newest first: those are the changes that
/// can change what it holds (a new price, name or text only shows where listed, and cart changes leave it
/// alone). Refreshes triggered
/// by the feed keep showing the current items (no `loading`). `trending`'s counts are not live: views
/// and adds are not on the feed (they would reload every dashboard on every product view), so they
/// change on a reload, a reload of the section, a deletion or a resync.
@MainActor @Observable
public final class DashboardViewModel {
    /// Items per product section.
    public static let productLimit = 6
    /// Orders shown.
    public static let recentOrderLimit = 3
    /// Trending products shown.
    public static let trendingLimit = 5
    /// The period trending counts: the last 24 hours.
    public static let trendingPeriod: TimeInterval = 24 * 60 * 60

    public private(set) var featured = Section<Product>()
    public private(set) var categories = Section<CategorySummary>()
    public private(set) var recentOrders = Section<Order>()
    public private(set) var recommended = Section<Product>()
    public private(set) var trending = Section<TrendingProduct>()

    @ObservationIgnored private let catalog: any CatalogService
    @ObservationIgnored private let orders: any OrderService
    @ObservationIgnored private let recommendations: any RecommendationService
    @ObservationIgnored private let analytics: any AnalyticsService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private let session: ShopSession
    @ObservationIgnored private var subscription: ShopSubscription?
    @ObservationIgnored private var loadTasks: [DashboardSection: Task<Bool, Never>] = [:]
    /// Counts each section's loads, so that a load can tell whether it is still the current one.
    @ObservationIgnored private var loadGenerations: [DashboardSection: Int] = [:]
    /// The phase each section's loads replaced, shown again if the current one is abandoned.
    @ObservationIgnored private var phasesBeforeLoad: [DashboardSection: Phase] = [:]

    /// One section's phase and items.
    public struct Section<Item: Equatable & Sendable>: Equatable, Sendable {
        public var phase: Phase = .idle
        public var items: [Item] = []
    }

    /// Creates the ViewModel; nothing loads before ``appear()``.
    public init(
        catalog: any CatalogService, orders: any OrderService, recommendations: any RecommendationService,
        analytics: any AnalyticsService, events: ShopEvents, session: ShopSession
    ) {
        self.catalog = catalog
        self.orders = orders
        self.recommendations = recommendations
        self.analytics = analytics
        self.events = events
        self.session = session
    }

    /// Creates the ViewModel from the service container.
    public convenience init(services: ShopServices, session: ShopSession) {
        self.init(catalog: services.catalog, orders: services.orders, recommendations: services.recommendations,
                  analytics: services.analytics, events: services.events, session: session)
    }

    // MARK: State

    /// The whole state as one value.
    public var state: DashboardState {
        DashboardState(
            featured: snapshot(featured, ProductSummary.init),
            categories: snapshot(categories, CategoryCount.init),
            recentOrders: snapshot(recentOrders, OrderSnapshot.init),
            recommended: snapshot(recommended, ProductSummary.init),
            trending: snapshot(trending, TrendingItem.init))
    }

    private func snapshot<Item, Wire>(_ section: Section<Item>, _ transform: (Item) -> Wire) -> SectionState<Wire> {
        SectionState(phase: section.phase.name, error: section.phase.error, items: section.items.map(transform))
    }

    // MARK: Lifecycle

    /// Subscribes to the feed and starts loading every section in parallel (each becomes `loading`
    /// at once). Calling it again while open does nothing.
    public func appear() {
        guard subscription == nil else { return }
        subscription = events.subscribe { [weak self] in self?.handle($0) }
        for section in DashboardSection.allCases { startLoad(section, showsLoading: true) }
    }

    /// Cancels every task and unsubscribes.
    public func close() {
        subscription?.cancel()
        subscription = nil
        for task in loadTasks.values { task.cancel() }
        loadTasks = [:]
        for section in DashboardSection.allCases where phase(of: section) == .loading {
            setPhase(.idle, of: section)
        }
    }

    // MARK: Intents

    /// Reloads every section; returns when all have loaded or failed.
    /// - Returns: `.superseded` when a newer load replaced one of the sections' (each then shows the
    ///   newer one's result), `.cancelled` when the caller was cancelled.
    public func reload() async -> IntentOutcome {
        let started = DashboardSection.allCases.map { ($0, loadGenerations[$0, default: 0] + 1, startLoad($0, showsLoading: true)) }
        let outcomes = await withTaskCancellationHandler {
            var outcomes: [IntentOutcome] = []
            for (section, generation, task) in started {
                outcomes.append(await task.outcome(generation: generation) { self.loadGenerations[section, default: 0] })
            }
            return outcomes
        } onCancel: {
            for (_, _, task) in started { task.cancel() }
        }
        if outcomes.contains(.cancelled) { return .cancelled }
        return outcomes.contains(.superseded) ? .superseded : .completed
    }

    /// Reloads one section.
    /// - Returns: `.superseded` when a newer load of the section replaced this one, `.cancelled` when the
    ///   caller was cancelled.
    public func reloadSection(_ section: DashboardSection) async -> IntentOutcome {
        let task = startLoad(section, showsLoading: true)
        return await task.outcome(generation: loadGenerations[section, default: 0]) { self.loadGenerations[section, default: 0] }
    }


    // MARK: Loading

    @discardableResult
    private func startLoad(_ section: DashboardSection, showsLoading: Bool) -> Task<Bool, Never> {
        loadTasks[section]?.cancel()
        let generation = loadGenerations[section, default: 0] + 1
        loadGenerations[section] = generation
        if phase(of: section) != .loading { phasesBeforeLoad[section] = phase(of: section) }
        if showsLoading { setPhase(.loading, of: section) }
        let task: Task<Bool, Never> = switch section {
        case .featured:
            load(section, generation, { [catalog] in try await catalog.featured(limit: Self.productLimit) }) { $0.featured.items = $1 }
        case .categories:
            load(section, generation, { [catalog] in try await catalog.categories() }) { $0.categories.items = $1 }
        case .recentOrders:
            load(section, generation, { [orders, shopper = session.shopper] in
                // A guest has no orders to show: say so, rather than show an empty list as if it were true.
                guard shopper.accountId != nil else { throw ShopError.signInRequired("see your orders") }
                return try await orders.recentOrders(limit: Self.recentOrderLimit, of: shopper)
            }) {
                $0.recentOrders.items = $1
            }
        case .recommended:
            load(section, generation, { [recommendations, shopper = session.shopper] in
                try await recommendations.recommendations(limit: Self.productLimit, for: shopper)
            }) {
                $0.recommended.items = $1
            }
        case .trending:
            load(section, generation, { [analytics, since = session.now().addingTimeInterval(-Self.trendingPeriod)] in
                try await analytics.trending(since: since, limit: Self.trendingLimit)
            }) {
                $0.trending.items = $1
            }
        }
        loadTasks[section] = task
        return task
    }

    private func load<Items: Sendable>(
        _ section: DashboardSection,
        _ generation: Int,
        _ fetch: @escaping @Sendable () async throws -> Items,
        apply: @escaping @MainActor (DashboardViewModel, Items) -> Void
    ) -> Task<Bool, Never> {
        Task { [weak self] () -> Bool in
            var shown = false
            defer { if !shown { self?.loadEnded(section, generation: generation) } }
            do {
                let items = try await fetch()
                guard let self, !Task.isCancelled else { return false }
                apply(self, items)
                self.setPhase(.loaded, of: section)
                shown = true
            } catch {
                guard let self, !Task.isCancelled, let info = Failure.loadError(error) else { return false }
                self.setPhase(.failed(info), of: section)
                shown = true
            }
            return shown
        }
    }

    /// A section's load ended without showing a result. If it was still the current one (its caller
    /// was cancelled: nothing newer replaced it), nothing else will finish it: the section goes back to
    /// the phase it had before, rather than showing `loading` for ever.
    private func loadEnded(_ section: DashboardSection, generation: Int) {
        guard loadGenerations[section] == generation, phase(of: section) == .loading else { return }
        setPhase(phasesBeforeLoad[section] ?? .idle, of: section)
    }

    private func phase(of section: DashboardSection) -> Phase {
        switch section {
        case .featured: featured.phase
        case .categories: categories.phase
        case .recentOrders: recentOrders.phase
        case .recommended: recommended.phase
        case .trending: trending.phase
        }
    }

    private func setPhase(_ phase: Phase, of section: DashboardSection) {
        switch section {
        case .featured: featured.phase = phase
        case .categories: categories.phase = phase
        case .recentOrders: recentOrders.phase = phase
        case .recommended: recommended.phase = phase
        case .trending: trending.phase = phase
        }
    }

    // MARK: Feed

    private func handle(_ event: ShopEvent) {
        switch event {
        case .orderPlaced(let order, let shopper):
            if shopper == session.shopper {
                if recentOrders.phase == .loaded {
                    recentOrders.items = Array(([order] + recentOrders.items.filter { $0.id != order.id }).prefix(Self.recentOrderLimit))
                } else if recentOrders.phase != .idle {
                    events.track(startLoad(.recentOrders, showsLoading: true))
                }
            }
            // Anyone's order changes stock, and only products in stock are recommended.
            refreshQuietly(.recommended)
        case .productCreated:
            refreshQuietly(.featured)
            refreshQuietly(.categories)
            refreshQuietly(.recommended)
        case .productsDeleted:
            refreshQuietly(.featured)
            refreshQuietly(.categories)
            refreshQuietly(.recommended)
            refreshQuietly(.trending)
        case .favoriteChanged(_, _, let shopper) where shopper == session.shopper:
            refreshQuietly(.recommended)
        case .shopperDataChanged(let shopper) where shopper == session.shopper:
            refreshQuietly(.recentOrders)
            refreshQuietly(.recommended)
        case .sessionChanged:
            // Nothing of the last shopper's stays shown, even for a moment: the sections load again, shown
            // as loading (not as loaded and empty).
            recentOrders.items = []
            recommended.items = []
            for section in [DashboardSection.recentOrders, .recommended] where phase(of: section) != .idle {
                events.track(startLoad(section, showsLoading: true))
            }
        case .productMoved:
            // Recommendations are chosen by category: the product may join or leave them, and when the
            // shopper favourited or ordered it, the categories they are chosen from changed.
            refreshQuietly(.categories)
            refreshQuietly(.recommended)
        case .productRestocked:
            // Only products in stock are recommended: this one may now be.
            refreshQuietly(.recommended)
        case .resync:
            for section in DashboardSection.allCases { refreshQuietly(section) }
        case .productChanged(let product):
            // Shown with its new price and stock where it is listed; one out of stock leaves the
            // recommendations (only products in stock are recommended).
            if let index = featured.items.firstIndex(where: { $0.id == product.id }) { featured.items[index] = product }
            if let index = trending.items.firstIndex(where: { $0.product.id == product.id }) { trending.items[index].product = product }
            if let index = recommended.items.firstIndex(where: { $0.id == product.id }) {
                recommended.items[index] = product
                if !product.isInStock { refreshQuietly(.recommended) }
            }
        default:
            break
        }
    }

    /// Reloads a loaded section without showing `loading`; a section not loaded reloads normally. The
    /// load is tracked on the feed, so the answer of the action whose change caused it waits for it.
    private func refreshQuietly(_ section: DashboardSection) {
        switch phase(of: section) {
        case .idle: break
        case .loaded: events.track(startLoad(section, showsLoading: false))
        case .loading, .failed: events.track(startLoad(section, showsLoading: true))
        }
    }
}
