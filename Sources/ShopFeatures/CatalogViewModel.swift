import Observation
import Shop

/// A searchable, filterable, sortable product list with paging and multi-selection for deletion.
///
/// ```swift
/// let catalog = CatalogViewModel(services: services, clock: ContinuousClock())
/// catalog.appear()                       // phase is .loading at once
/// _ = await catalog.search("oak")        // .completed, or .superseded by a later search
/// ```
///
/// Feed: deleted products leave the list at once; a created product, or an order of a listed product
/// (stock changed), reloads the loaded pages without showing `loading`.
@MainActor @Observable
public final class CatalogViewModel {
    /// Products per page.
    public static let pageSize = 20
    /// Quiet time before a search runs.
    public static let searchDebounce = Duration.milliseconds(300)

    public private(set) var phase: Phase = .idle
    public private(set) var query = ""
    public private(set) var categoryId: String?
    public private(set) var sort: ProductSort = .name
    public private(set) var products: [Product] = []
    public private(set) var totalCount = 0
    public private(set) var selection: Set<String> = []
    public private(set) var isLoadingMore = false
    /// The last failed action, while the content stays loaded.
    public private(set) var actionError: ErrorInfo?

    @ObservationIgnored private let catalog: any CatalogService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private var subscription: ShopSubscription?
    /// The load that decides the list; a new list intent cancels it.
    @ObservationIgnored private var listTask: Task<Bool, Never>?
    @ObservationIgnored private var listGeneration = 0
    @ObservationIgnored private var loadMoreTask: Task<Void, Never>?
    @ObservationIgnored private var deleteTask: Task<ShopError?, Never>?
    @ObservationIgnored private var loadMoreGeneration = 0
    /// Whether a list load (or a search waiting for quiet) is running.
    @ObservationIgnored private var isListLoadRunning = false
    /// The phase that list loads replaced, shown again if the current one is abandoned.
    @ObservationIgnored private var phaseBeforeListLoad: Phase = .idle
    @ObservationIgnored private var knownCategoryIds: Set<String>?
    @ObservationIgnored private let tasks = TaskBag()

    /// Creates the ViewModel; nothing loads before ``appear()``.
    public init(catalog: any CatalogService, events: ShopEvents, clock: any Clock<Duration>) {
        self.catalog = catalog
        self.events = events
        self.clock = clock
    }

    /// Creates the ViewModel from the service container.
    public convenience init(services: ShopServices, clock: any Clock<Duration>) {
        self.init(catalog: services.catalog, events: services.events, clock: clock)
    }

    // MARK: State

    /// Whether more products match than are loaded.
    public var hasMore: Bool { products.count < totalCount }

    /// The whole state as one value.
    public var state: CatalogState {
        CatalogState(
            phase: phase.name, error: phase.error ?? actionError, query: query, category: categoryId, sort: sort,
            products: products.map(ProductSummary.init), totalCount: totalCount, hasMore: hasMore,
            selection: selection.sorted(), isLoadingMore: isLoadingMore)
    }

    // MARK: Lifecycle

    /// Subscribes to the feed and starts loading the first page (phase becomes `loading` at once).
    /// Calling it again while open does nothing.
    public func appear() {
        guard subscription == nil else { return }
        subscription = events.subscribe { [weak self] in self?.handle($0) }
        startList(debounced: false, showsLoading: true)
        tasks.run { [weak self] in await self?.loadCategoryIds() }
    }

    /// Cancels every task and unsubscribes. The ViewModel can be opened again with ``appear()``.
    public func close() {
        subscription?.cancel()
        subscription = nil
        listTask?.cancel()
        loadMoreTask?.cancel()
        deleteTask?.cancel()
        tasks.cancelAll()
        isListLoadRunning = false
        isLoadingMore = false
        if phase == .loading { phase = .idle }
    }

    // MARK: Intents

    /// Reloads the first page with the current search, category and sort.
    public func refresh() async {
        _ = await startList(debounced: false, showsLoading: true).valueCancellingWithCaller()
    }

    /// Sets the search text at once and searches after 300 ms without another search.
    /// - Returns: `.completed` when this search's results (or failure) are shown, `.superseded` when a
    ///   newer search, filter, sort or refresh replaced it, `.cancelled` when the caller was cancelled.
    public func search(_ text: String) async -> SearchOutcome {
        query = text
        let task = startList(debounced: true, showsLoading: true)
        let generation = listGeneration
        let completed = await task.valueCancellingWithCaller()
        if completed { return .completed }
        return listGeneration != generation ? .superseded : .cancelled
    }

    /// Shows one category, or all with `nil`, and returns when the first page is loaded.
    /// - Throws: ``ShopError`` `categoryNotFound` for an unknown category (nothing changes).
    public func setCategory(_ categoryId: String?) async throws {
        if let categoryId {
            if knownCategoryIds == nil { await loadCategoryIds() }
            guard let known = knownCategoryIds else {
                actionError = ErrorInfo(message: "Categories could not be loaded. Please try again.", retryable: true)
                return
            }
            guard known.contains(categoryId) else { throw ShopError.categoryNotFound(categoryId) }
        }
        self.categoryId = categoryId
        _ = await startList(debounced: false, showsLoading: true).valueCancellingWithCaller()
    }

    /// Changes the order and returns when the first page is loaded.
    public func setSort(_ sort: ProductSort) async {
        self.sort = sort
        _ = await startList(debounced: false, showsLoading: true).valueCancellingWithCaller()
    }

    /// Appends the next page. Does nothing when not loaded, nothing more matches, or a page is
    /// already loading.
    public func loadMore() async {
        guard phase == .loaded, hasMore, !isLoadingMore else { return }
        isLoadingMore = true
        loadMoreGeneration += 1
        let generation = loadMoreGeneration
        let query = currentQuery(offset: products.count, limit: Self.pageSize)
        let task = Task { [weak self, catalog] in
            let result: Result<ProductPage, any Error>
            do { result = .success(try await catalog.page(query)) } catch { result = .failure(error) }
            guard let self, generation == self.loadMoreGeneration else { return }
            self.isLoadingMore = false
            guard !Task.isCancelled else { return }
            switch result {
            case .success(let page):
                let known = Set(self.products.map(\.id))
                self.products += page.products.filter { !known.contains($0.id) }
                self.totalCount = page.totalCount
                self.actionError = nil
            case .failure(let error):
                if let info = Failure.loadError(error) { self.actionError = info }
            }
        }
        loadMoreTask = task
        await task.valueCancellingWithCaller()
    }

    /// Selects a loaded product, or deselects it if selected.
    /// - Throws: ``ShopError`` `productNotFound` when the product is not in the list.
    public func toggleSelection(_ productId: String) throws {
        guard products.contains(where: { $0.id == productId }) else { throw ShopError.productNotFound(productId) }
        if selection.remove(productId) == nil { selection.insert(productId) }
    }

    /// Selects every loaded product.
    public func selectAll() {
        selection = Set(products.map(\.id))
    }

    /// Deselects everything.
    public func clearSelection() {
        selection = []
    }

    /// Deletes the selected products, clears the selection and reloads the list.
    /// - Throws: ``ShopError`` `nothingSelected`, `alreadySubmitting` while a deletion runs, or the
    ///   catalog's refusal (nothing changes). Operational failures are shown in `error`.
    public func deleteSelected() async throws {
        guard !selection.isEmpty else { throw ShopError.nothingSelected }
        guard deleteTask == nil else { throw ShopError.alreadySubmitting }
        let ids = selection.sorted()
        let task = Task { [weak self, catalog] () -> ShopError? in
            do {
                try await catalog.delete(ids: ids)
                guard let self, !Task.isCancelled else { return nil }
                self.selection.subtract(ids)
                self.actionError = nil
                _ = await self.startList(debounced: false, showsLoading: false).value
            } catch {
                return Failure.refusal(error) { self?.actionError = $0 }
            }
            return nil
        }
        deleteTask = task
        let refusal = await task.valueCancellingWithCaller()
        deleteTask = nil
        if let refusal { throw refusal }
    }

    // MARK: Loading

    private func currentQuery(offset: Int, limit: Int) -> ProductQuery {
        ProductQuery(searchText: query, categoryId: categoryId, sort: sort, offset: offset, limit: limit)
    }

    /// Replaces the list load: cancels the running one (and any page being appended) and starts anew.
    /// - Returns: The task; its value is `false` when it was cancelled before showing a result.
    @discardableResult
    private func startList(debounced: Bool, showsLoading: Bool) -> Task<Bool, Never> {
        listTask?.cancel()
        loadMoreTask?.cancel()
        isLoadingMore = false
        listGeneration += 1
        loadMoreGeneration += 1
        isListLoadRunning = true
        let generation = listGeneration
        if phase != .loading { phaseBeforeListLoad = phase }
        if showsLoading && !debounced { phase = .loading }
        let limit = showsLoading ? Self.pageSize : max(Self.pageSize, products.count)
        let task = Task { [weak self, catalog, clock] () -> Bool in
            var shown = false
            defer { if !shown { self?.listLoadEnded(generation: generation) } }
            do {
                if debounced {
                    try await clock.sleep(for: Self.searchDebounce)
                    self?.phase = .loading
                }
                guard let query = self?.currentQuery(offset: 0, limit: limit) else { return false }
                let page = try await catalog.page(query)
                guard let self, !Task.isCancelled, generation == self.listGeneration else { return false }
                self.isListLoadRunning = false
                self.products = page.products
                self.totalCount = page.totalCount
                self.selection.formIntersection(page.products.map(\.id))
                self.phase = .loaded
                self.actionError = nil
                shown = true
                return true
            } catch {
                guard let self, !Task.isCancelled, generation == self.listGeneration,
                      let info = Failure.loadError(error)
                else { return false }
                self.isListLoadRunning = false
                self.phase = .failed(info)
                shown = true
                return true
            }
        }
        listTask = task
        return task
    }

    /// A list load ended without showing a result. If it was still the current one (its caller was
    /// cancelled: nothing newer replaced it), nothing else will finish it: the list goes back to the
    /// phase it had before, rather than showing `loading` for ever and blocking `loadMore`.
    private func listLoadEnded(generation: Int) {
        guard generation == listGeneration, isListLoadRunning else { return }
        isListLoadRunning = false
        if phase == .loading { phase = phaseBeforeListLoad }
    }

    private func loadCategoryIds() async {
        guard let summaries = try? await catalog.categories() else { return }
        knownCategoryIds = Set(summaries.map(\.category.id))
    }

    // MARK: Feed

    private func handle(_ event: ShopEvent) {
        switch event {
        case .productsDeleted(let ids):
            let deleted = Set(ids)
            let before = products.count
            products.removeAll { deleted.contains($0.id) }
            totalCount = max(0, totalCount - (before - products.count))
            selection.subtract(deleted)
        case .productCreated(let product):
            knownCategoryIds?.insert(product.categoryId)
            refreshQuietly()
        case .orderPlaced(let order):
            let listed = Set(products.map(\.id))
            if order.lines.contains(where: { listed.contains($0.productId) }) { refreshQuietly() }
        case .cartChanged, .favoriteChanged:
            break
        }
    }

    /// Reloads the loaded pages without showing `loading`, unless a list load is already running.
    private func refreshQuietly() {
        guard phase == .loaded, !isListLoadRunning else { return }
        startList(debounced: false, showsLoading: false)
    }
}
