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
/// Feed: deleted products leave the list at once and the list refills to its length; a created product,
/// or an order of a listed product (stock changed), reloads the loaded pages without showing `loading`.
/// `phase == .loaded` means the products are the results of `query`, `categoryId` and `sort`.
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
    public private(set) var loadMorePhase: PagingPhase = .idle
    /// The last failed action, while the content stays loaded.
    public private(set) var actionError: ErrorInfo?

    /// What a list shows: the search text, the category and the order.
    private struct Criteria: Equatable {
        var query: String
        var categoryId: String?
        var sort: ProductSort
    }

    @ObservationIgnored private let catalog: any CatalogService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private var subscription: ShopSubscription?
    /// The load that decides the list; a new list intent cancels it.
    @ObservationIgnored private var listTask: Task<Bool, Never>?
    @ObservationIgnored private var listGeneration = 0
    @ObservationIgnored private var loadMoreTask: Task<Bool, Never>?
    @ObservationIgnored private var deleteTask: Task<(any Error)?, Never>?
    @ObservationIgnored private var loadMoreGeneration = 0
    /// Whether a list load (or a search waiting for quiet) is running.
    @ObservationIgnored private var isListLoadRunning = false
    /// The phase that list loads replaced, shown again if the current one is abandoned.
    @ObservationIgnored private var phaseBeforeListLoad: Phase = .idle
    /// The criteria of the list shown, put back if a load for other criteria is abandoned.
    @ObservationIgnored private var shownCriteria: Criteria?
    /// How many products the user has asked to see (a page, plus a page per `loadMore`); quiet reloads
    /// load that many, so a list keeps its length when products come and go.
    @ObservationIgnored private var requestedCount = CatalogViewModel.pageSize
    @ObservationIgnored private var knownCategoryIds: Set<String>?
    /// A stored change arrived while a list load was running that may have read before it: reload once
    /// that load shows its result.
    @ObservationIgnored private var isStale = false
    /// Products changed while a list or page loaded, by id (the last change of each).
    @ObservationIgnored private var changedDuringLoad: [String: Product] = [:]
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
            selection: selection.sorted(), loadMorePhase: loadMorePhase.name, loadMoreError: loadMorePhase.error)
    }

    private var criteria: Criteria { Criteria(query: query, categoryId: categoryId, sort: sort) }

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
        changedDuringLoad = [:]
        listTask?.cancel()
        loadMoreTask?.cancel()
        deleteTask?.cancel()
        tasks.cancelAll()
        if isListLoadRunning { showListBeforeLoad() }
        if loadMorePhase == .loading { loadMorePhase = .idle }
        if phase == .loading { phase = .idle }
    }

    // MARK: Intents

    /// Reloads the first page with the current search, category and sort.
    /// - Returns: `.superseded` when a newer list intent replaced it, `.cancelled` when the caller was.
    public func refresh() async -> IntentOutcome {
        await listOutcome(startList(debounced: false, showsLoading: true))
    }

    /// Sets the search text at once (phase `loading`) and searches after 300 ms without another search.
    /// - Returns: `.completed` when this search's results (or failure) are shown, `.superseded` when a
    ///   newer search, filter, sort or refresh replaced it, `.cancelled` when the caller was cancelled
    ///   (the text of the results shown is put back).
    public func search(_ text: String) async -> IntentOutcome {
        query = text
        return await listOutcome(startList(debounced: true, showsLoading: true))
    }

    /// Shows one category, or all with `nil`, and returns when the first page is loaded.
    /// - Returns: `.superseded` when a newer list intent replaced it, `.cancelled` when the caller was.
    /// - Throws: ``ShopError`` `categoryNotFound` for an unknown category (nothing changes).
    public func setCategory(_ categoryId: String?) async throws -> IntentOutcome {
        if let categoryId {
            if knownCategoryIds == nil { await loadCategoryIds() }
            guard let known = knownCategoryIds else {
                actionError = ErrorInfo(message: "Categories could not be loaded. Please try again.", retryable: true)
                return .completed
            }
            guard known.contains(categoryId) else { throw ShopError.categoryNotFound(categoryId) }
        }
        self.categoryId = categoryId
        return await listOutcome(startList(debounced: false, showsLoading: true))
    }

    /// Changes the order and returns when the first page is loaded.
    /// - Returns: `.superseded` when a newer list intent replaced it, `.cancelled` when the caller was.
    public func setSort(_ sort: ProductSort) async -> IntentOutcome {
        self.sort = sort
        return await listOutcome(startList(debounced: false, showsLoading: true))
    }

    /// Appends the next page; a failure shows in `loadMorePhase` (the list stays loaded), and calling
    /// again retries. Does nothing when not loaded, nothing more matches, or a page is already loading.
    /// - Returns: `.superseded` when a new list (search, filter, sort, refresh) replaced the page.
    public func loadMore() async -> IntentOutcome {
        guard phase == .loaded, hasMore, loadMorePhase != .loading else { return .completed }
        loadMorePhase = .loading
        loadMoreGeneration += 1
        let generation = loadMoreGeneration
        let query = currentQuery(offset: products.count, limit: Self.pageSize)
        let task = Task { [weak self, catalog] () -> Bool in
            let result: Result<ProductPage, any Error>
            do { result = .success(try await catalog.page(query)) } catch { result = .failure(error) }
            guard let self, generation == self.loadMoreGeneration else { return false }
            guard !Task.isCancelled else {
                self.loadMorePhase = .idle
                if !self.isListLoadRunning { self.recheckChangesDuringLoad() }
                return false
            }
            switch result {
            case .success(let page):
                let known = Set(self.products.map(\.id))
                self.products += page.products.filter { !known.contains($0.id) }
                self.totalCount = page.totalCount
                self.requestedCount = max(self.requestedCount, self.products.count)
                self.loadMorePhase = .idle
                self.recheckChangesDuringLoad()
            case .failure(let error):
                guard let info = Failure.loadError(error) else {
                    self.loadMorePhase = .idle
                    if !self.isListLoadRunning { self.recheckChangesDuringLoad() }
                    return false
                }
                self.loadMorePhase = .failed(info)
                self.recheckChangesDuringLoad()
            }
            return true
        }
        loadMoreTask = task
        return await task.outcome(generation: generation) { self.loadMoreGeneration }
    }

    /// Selects a listed (loaded) product, or deselects it if selected.
    /// - Throws: ``ShopError`` `notListed` when the product is not in the loaded list.
    public func toggleSelection(_ productId: String) throws {
        guard products.contains(where: { $0.id == productId }) else { throw ShopError.notListed(productId) }
        if selection.remove(productId) == nil { selection.insert(productId) }
    }

    /// Selects every listed product: the pages loaded so far, not every match (`totalCount`).
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
        let task = Task { [weak self, catalog] () -> (any Error)? in
            do {
                try await catalog.delete(ids: ids)
                // Deleted: the action succeeded, even if its caller was cancelled meanwhile.
                guard let self else { return nil }
                self.selection.subtract(ids)
                self.actionError = nil
                _ = await self.startList(debounced: false, showsLoading: false).value
            } catch {
                return Failure.thrown(error) { self?.actionError = $0 }
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

    private func listOutcome(_ task: Task<Bool, Never>) async -> IntentOutcome {
        await task.outcome(generation: listGeneration) { self.listGeneration }
    }

    /// Replaces the list load: cancels the running one (and any page being appended) and starts anew.
    /// - Parameters:
    ///   - debounced: wait 300 ms of quiet first (a search).
    ///   - showsLoading: a list the user asked for (phase `loading`, first page); otherwise a quiet
    ///     reload of as many products as the user asked to see.
    /// - Returns: The task; its value is `false` when it was cancelled before showing a result.
    @discardableResult
    private func startList(debounced: Bool, showsLoading: Bool) -> Task<Bool, Never> {
        listTask?.cancel()
        loadMoreTask?.cancel()
        loadMorePhase = .idle
        listGeneration += 1
        loadMoreGeneration += 1
        isListLoadRunning = true
        let generation = listGeneration
        if phase != .loading { phaseBeforeListLoad = phase }
        if showsLoading {
            phase = .loading
            requestedCount = Self.pageSize
        }
        let limit = max(Self.pageSize, requestedCount)
        let task = Task { [weak self, catalog, clock] () -> Bool in
            var shown = false
            defer { if !shown { self?.listLoadEnded(generation: generation) } }
            do {
                if debounced { try await clock.sleep(for: Self.searchDebounce) }
                guard let criteria = self?.criteria, let query = self?.currentQuery(offset: 0, limit: limit) else { return false }
                let page = try await catalog.page(query)
                guard let self, !Task.isCancelled, generation == self.listGeneration else { return false }
                self.isListLoadRunning = false
                self.products = page.products
                self.totalCount = page.totalCount
                self.selection.formIntersection(page.products.map(\.id))
                self.shownCriteria = criteria
                self.phase = .loaded
                self.actionError = nil
                shown = true
                if self.isStale {
                    self.isStale = false
                    self.events.track(self.startList(debounced: false, showsLoading: false))
                } else {
                    self.recheckChangesDuringLoad()
                }
                return true
            } catch {
                guard let self, !Task.isCancelled, generation == self.listGeneration,
                      let info = Failure.loadError(error)
                else { return false }
                self.isListLoadRunning = false
                self.shownCriteria = self.criteria
                self.phase = .failed(info)
                shown = true
                return true
            }
        }
        listTask = task
        return task
    }

    /// A list load ended without showing a result. If it was still the current one (its caller was
    /// cancelled: nothing newer replaced it), nothing else will finish it: the list goes back to what it
    /// showed before, its phase and the search, category and sort of its results, rather than showing
    /// `loading` for ever or a query over results that are not its own.
    private func listLoadEnded(generation: Int) {
        guard generation == listGeneration, isListLoadRunning else { return }
        showListBeforeLoad()
        if phase == .loaded { recheckChangesDuringLoad() }
    }

    /// Abandons the running list load: shows the phase it replaced and the criteria of the results shown.
    private func showListBeforeLoad() {
        isListLoadRunning = false
        if let shownCriteria, shownCriteria != criteria {
            query = shownCriteria.query
            categoryId = shownCriteria.categoryId
            sort = shownCriteria.sort
        }
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
            // Gone at once, then the list refills to the length the user asked for, as the list that
            // deleted them does.
            let deleted = Set(ids)
            let before = products.count
            products.removeAll { deleted.contains($0.id) }
            totalCount = max(0, totalCount - (before - products.count))
            selection.subtract(deleted)
            if products.count < before { refreshQuietly() }
        case .productCreated(let product):
            knownCategoryIds?.insert(product.categoryId)
            refreshQuietly()
        case .orderPlaced(let order, _):
            // Anyone's order changes stock.
            let listed = Set(products.map(\.id))
            if order.lines.contains(where: { listed.contains($0.productId) }) { refreshQuietly() }
        case .productChanged(let product):
            if isListLoadRunning || loadMorePhase == .loading {
                // The load under way may have read before this change: the change is decided against what
                // it shows once it ends (`recheckChangesDuringLoad`), which the action's answer waits for.
                // Not a reload now: under a market simulation a change comes during nearly every load.
                changedDuringLoad[product.id] = product
                if let task = isListLoadRunning ? listTask : loadMoreTask { events.track(task) }
                if isListLoadRunning { return }
            }
            if let index = products.firstIndex(where: { $0.id == product.id }) {
                // Shown at once; the list loads again only if the change can move it or take it out.
                let old = products[index]
                products[index] = product
                if old.name != product.name || old.description != product.description
                    || old.categoryId != product.categoryId || (sort == .price && old.price != product.price) {
                    refreshQuietly()
                }
            } else if loadMorePhase != .loading, !query.isEmpty || sortsIntoLoadedPages(product) {
                // A product not listed may now match the search, or (renamed, repriced) sort into the pages
                // loaded.
                refreshQuietly()
            }
        case .productMoved(let productId, _, let to):
            // One moved into the category shown and not listed yet may belong in the loaded pages (one
            // listed reloaded on its change).
            if categoryId == to && !products.contains(where: { $0.id == productId }) { refreshQuietly() }
        case .resync:
            knownCategoryIds = nil
            events.track(tasks.run { [weak self] in await self?.loadCategoryIds() })
            refreshQuietly()
        default:
            break
        }
    }

    /// Reloads the loaded pages without showing `loading`; when a list load is running (which may have
    /// read before the change), reloads once it shows its result. The work is tracked on the feed, so the
    /// answer of the action whose change caused it waits for it.
    /// Whether an unlisted product, as it is now, belongs in the pages loaded: it is in the category shown
    /// and sorts before the last product listed. A change of an unlisted product that does (a rename in a
    /// list by name, a lower price in a list by price) moved it in; one that does not (most changes, under a
    /// market simulation) cannot show. A list by age does not move on a change; one with every match loaded
    /// lists all of its category's products (one that moved in is `productMoved`'s).
    private func sortsIntoLoadedPages(_ product: Product) -> Bool {
        if let categoryId, product.categoryId != categoryId { return false }
        guard hasMore, let last = products.last else { return false }
        switch sort {
        case .name:
            // As SQLite's `name COLLATE NOCASE, id`: UTF-8 bytes with ASCII letters folded to lower case.
            let key = Self.nocaseBytes(product.name), lastKey = Self.nocaseBytes(last.name)
            return key == lastKey ? product.id < last.id : key.lexicographicallyPrecedes(lastKey)
        case .price:
            return product.price == last.price ? product.id < last.id : product.price < last.price
        case .newest:
            return false
        }
    }

    private static func nocaseBytes(_ text: String) -> [UInt8] {
        text.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
    }

    /// Decides the product changes that came while a list or page loaded against what is shown now (the
    /// load may have read before them).
    private func recheckChangesDuringLoad() {
        let changed = changedDuringLoad
        changedDuringLoad = [:]
        guard subscription != nil else { return }
        for product in changed.values.sorted(by: { $0.id < $1.id }) { handle(.productChanged(product)) }
    }

    private func refreshQuietly() {
        guard phase == .loaded || isListLoadRunning else { return }
        if isListLoadRunning {
            isStale = true
            if let listTask { events.track(listTask) }
            return
        }
        events.track(startList(debounced: false, showsLoading: false))
    }
}
