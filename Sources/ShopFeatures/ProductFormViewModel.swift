import Foundation
import Observation
import Shop

/// The form that creates a product, or (given a product id) changes one.
///
/// Validation runs continuously; `errors` shows the messages of the fields the user has edited, and
/// of every field once a submission was tried. `submit()` on an invalid form is refused with
/// `validationFailed`, its `details` naming every invalid field (and `errors` now shows them all). A
/// succeeded form is not submitted twice: changing a field starts a new product, `reset()` empties it.
/// A created product is published on the feed by the catalog service, so open catalogs reload.
///
/// Edit mode loads the product into the fields with the categories; `submit()` stores the fields the user
/// changed (those that differ from the stored product) as its new values and leaves the others as they
/// are stored, and `reset()` puts back the stored values. A change of the product stored elsewhere
/// (another form, a checkout's stock, another server) shows in every field the user has not changed; the
/// fields the user changed keep their edits. So a form open while a sale lowers the stock does not put
/// the old stock back when the user saves a new description.
@MainActor @Observable
public final class ProductFormViewModel {
    public private(set) var phase: Phase = .idle
    public private(set) var fields = ProductFormFields()
    public private(set) var touched: Set<ProductFormField> = []
    public private(set) var categories: [Category] = []
    public private(set) var submitPhase: SubmitPhase = .idle
    public private(set) var createdProductId: String?
    /// The product edited (nil in create mode).
    public let productId: String?
    /// The edited product as last stored (nil in create mode and before it loaded).
    public private(set) var storedProduct: Product?

    @ObservationIgnored private let catalog: any CatalogService
    @ObservationIgnored private let events: ShopEvents
    @ObservationIgnored private var subscription: ShopSubscription?
    @ObservationIgnored private let load = ReplaceableLoad()
    /// What the failed load could not read: `categories` or (editing) `product`.
    @ObservationIgnored private var failedPart = "categories"
    @ObservationIgnored private let tasks = TaskBag()
    @ObservationIgnored private var submitTask: Task<(any Error)?, Never>?

    /// Creates the ViewModel; categories (and in edit mode the product) load on ``appear()``.
    /// - Parameters:
    ///   - catalog: The catalog.
    ///   - productId: The product to edit; nil for a form that creates one.
    ///   - events: The feed an edit form follows the product's stored changes on.
    public init(catalog: any CatalogService, productId: String? = nil, events: ShopEvents = ShopEvents()) {
        self.catalog = catalog
        self.productId = productId
        self.events = events
    }

    /// Creates the ViewModel from the service container.
    public convenience init(services: ShopServices, productId: String? = nil) {
        self.init(catalog: services.catalog, productId: productId, events: services.events)
    }

    /// `create` or `edit`.
    public var mode: ProductFormMode { productId == nil ? .create : .edit }

    /// The fields as they are before the user edits them: the stored product's in edit mode.
    public var originalFields: ProductFormFields {
        storedProduct.map(ProductFormFields.init) ?? ProductFormFields()
    }

    /// Whether the fields differ from ``originalFields``.
    public var hasChanges: Bool { fields != originalFields }

    // MARK: State

    /// Every invalid field's message, touched or not.
    public var fieldErrors: [ProductFormField: String] {
        var errors: [ProductFormField: String] = [:]
        errors[.name] = ProductRules.nameError(fields.name)
        errors[.description] = ProductRules.descriptionError(fields.description)
        errors[.price] = ProductRules.priceTextError(fields.price)
        errors[.category] = categoryError
        errors[.stock] = ProductRules.stockTextError(fields.stock)
        return errors
    }

    private var categoryError: String? {
        if fields.category.isEmpty { return "Category is required." }
        if case .failed = phase { return "Categories could not be loaded; refresh to try again." }
        if phase != .loaded { return "Categories are not loaded yet." }
        return categories.contains { $0.id == fields.category } ? nil : "Choose one of the categories."
    }

    /// Whether the form can be submitted.
    public var isValid: Bool { fieldErrors.isEmpty }

    /// The whole state as one value.
    public var state: ProductFormState {
        let visible = fieldErrors.filter { touched.contains($0.key) }
        return ProductFormState(
            phase: phase.name, error: phase.error ?? submitPhase.error, fields: fields,
            errors: Dictionary(uniqueKeysWithValues: visible.map { ($0.key.rawValue, $0.value) }),
            isValid: isValid, submitPhase: submitPhase.name, createdProductId: createdProductId,
            categories: categories.map(CategoryOption.init), mode: mode, productId: productId, hasChanges: hasChanges)
    }

    // MARK: Lifecycle

    /// Loads the categories (phase becomes `loading` at once). Calling it again retries a failed load
    /// and otherwise does nothing.
    public func appear() {
        if productId != nil, subscription == nil {
            subscription = events.subscribe { [weak self] in self?.handle($0) }
        }
        guard phase != .loading, phase != .loaded else { return }
        startLoad()
    }

    /// Cancels every task and unsubscribes.
    public func close() {
        subscription?.cancel()
        subscription = nil
        load.cancel()
        tasks.cancelAll()
        submitTask?.cancel()
        if phase == .loading { phase = .idle }
    }

    /// Loads the categories again: the retry after a failed load.
    /// - Returns: `.superseded` when a newer refresh replaced this one.
    public func refresh() async -> IntentOutcome {
        await load.outcome(of: startLoad())
    }

    @discardableResult
    private func startLoad() -> Task<Bool, Never> {
        load.start(
            phase: .init(get: { [weak self] in self?.phase }, set: { [weak self] in self?.phase = $0 }),
            reloadAfterAbandon: { [weak self] in if let self, let productId = self.productId { self.reloadProduct(productId) } }
        ) { [weak self, catalog, productId] in
            do {
                async let summaries = catalog.categories()
                async let product: Product? = if let productId { try await catalog.product(id: productId) } else { nil }
                // Which part failed decides how a submit refused for it names it.
                let loadedSummaries: [CategorySummary]
                do { loadedSummaries = try await summaries } catch {
                    self?.failedPart = "categories"
                    throw error
                }
                let loadedProduct: Product?
                do { loadedProduct = try await product } catch {
                    self?.failedPart = "product"
                    throw error
                }
                guard let self, !Task.isCancelled else { return false }
                self.categories = loadedSummaries.map(\.category)
                if let loadedProduct { self.showStored(loadedProduct) }
                self.phase = .loaded
                if self.load.takeMissedChange(), let productId { self.reloadProduct(productId) }
            } catch {
                guard let self, !Task.isCancelled, let info = Failure.loadError(error) else { return false }
                self.phase = .failed(info)
            }
            return true
        }
    }

    // MARK: Intents

    /// Shows `product` as stored: its values replace the fields the user has not changed (those that
    /// still show the values stored before).
    private func showStored(_ product: Product) {
        let previous = storedProduct.map(ProductFormFields.init)
        let stored = ProductFormFields(product)
        storedProduct = product
        guard let previous, previous != fields else {
            fields = stored
            touched = []
            return
        }
        for field in ProductFormField.allCases where fields[field] == previous[field] { fields[field] = stored[field] }
    }

    /// The change that stores the fields the user changed: those that differ from the stored product.
    private func update(name: String, price: Money, stock: Int) -> ProductUpdate {
        guard let stored = storedProduct else {
            return ProductUpdate(name: name, description: fields.description, price: price, categoryId: fields.category, stock: stock)
        }
        return ProductUpdate(
            name: name == stored.name ? nil : name,
            description: fields.description == stored.description ? nil : fields.description,
            price: price == stored.price ? nil : price,
            categoryId: fields.category == stored.categoryId ? nil : fields.category,
            stock: stock == stored.stock ? nil : stock)
    }

    /// Sets a field's value and marks it as edited. After a successful submission, this starts a new
    /// product (`submitPhase` goes back to `idle`).
    /// - Throws: ``ShopError`` `alreadySubmitting` while a submission runs (the form then shows what is
    ///   being created).
    public func setField(_ field: ProductFormField, _ value: String) throws {
        guard submitTask == nil else { throw ShopError.alreadySubmitting }
        if submitPhase == .succeeded {
            submitPhase = .idle
            createdProductId = nil
        }
        fields[field] = value
        touched.insert(field)
    }


    /// Creates the product (on success `createdProductId` names it), or in edit mode stores the fields as
    /// the product's values (on success the fields show the product as stored).
    /// - Throws: ``ShopError`` `validationFailed` (with every invalid field in `details`; `errors` now
    ///   shows every field's message, as a form does once submit is pressed), `alreadySubmitting`,
    ///   `alreadySubmitted` when this form already created its product, or the catalog's refusal. Operational
    ///   failures show as `submitPhase` `failed` with `error`.
    public func submit() async throws {
        guard submitTask == nil else { throw ShopError.alreadySubmitting }
        if submitPhase == .succeeded, let createdProductId { throw ShopError.alreadySubmitted(productId: createdProductId) }
        if case .failed(let message, let retryable) = phase {
            // An edit form's load failure names what failed itself (e.g. the product was deleted).
            throw failedPart == "categories"
                ? ShopError.loadFailed("categories", message: "The categories could not be loaded: \(message)", retryable: retryable)
                : ShopError.loadFailed("product", message: message, retryable: retryable)
        }
        let errors = fieldErrors
        guard errors.isEmpty, let price = Money(decimalString: fields.price.trimmingCharacters(in: .whitespaces)),
              let stock = Int(fields.stock.trimmingCharacters(in: .whitespaces))
        else {
            touched = Set(ProductFormField.allCases)
            throw ShopError.validationFailed(Dictionary(uniqueKeysWithValues: errors.map { ($0.key.rawValue, $0.value) }))
        }
        let name = fields.name.trimmingCharacters(in: .whitespacesAndNewlines)
        let newProduct = NewProduct(
            name: name, description: fields.description, price: price, categoryId: fields.category, stock: stock)
        let update = update(name: name, price: price, stock: stock)
        let previousPhase = submitPhase
        submitPhase = .submitting
        let task = Task { [weak self, catalog, productId] () -> (any Error)? in
            do {
                if let productId {
                    let product = try await catalog.update(id: productId, update)
                    self?.storedProduct = product
                    self?.fields = ProductFormFields(product)
                    self?.touched = []
                } else {
                    let product = try await catalog.create(newProduct)
                    self?.createdProductId = product.id
                }
                self?.submitPhase = .succeeded
            } catch {
                switch Failure(error) {
                case .cancelled:
                    self?.submitPhase = previousPhase
                    return CancellationError()
                case .refused(let error):
                    self?.submitPhase = previousPhase
                    return error
                case .operational(let info):
                    self?.submitPhase = .failed(info)
                }
            }
            return nil
        }
        submitTask = task
        let refusal = await task.valueCancellingWithCaller()
        submitTask = nil
        if let refusal { throw refusal }
    }

    /// Empties the form (in edit mode: puts back the stored product's values); if the load failed, loads
    /// again.
    /// - Throws: ``ShopError`` `alreadySubmitting` while a submission runs.
    public func reset() throws {
        guard submitTask == nil else { throw ShopError.alreadySubmitting }
        fields = originalFields
        touched = []
        submitPhase = .idle
        createdProductId = nil
        if case .failed = phase { startLoad() }
    }

    // MARK: Feed

    /// Loads the product as stored (tracked, so the answer of the action that caused it waits for it).
    private func reloadProduct(_ productId: String) {
        events.track(tasks.run { [weak self, catalog] in
            guard let product = try? await catalog.product(id: productId), !Task.isCancelled else { return }
            self?.showStored(product)
        })
    }

    private func handle(_ event: ShopEvent) {
        guard let productId, subscription != nil else { return }
        switch event {
        case .productChanged(let product) where product.id == productId && phase == .loaded:
            showStored(product)
        case .productChanged(let product) where product.id == productId && phase == .loading:
            // The load under way may have read before the change: it reads the product again after.
            load.noteMissedChange(tracking: events)
        case .orderPlaced(let order, _) where phase == .loading && order.lines.contains { $0.productId == productId }:
            load.noteMissedChange(tracking: events)
        case .resync where phase == .loading:
            load.noteMissedChange(tracking: events)
        case .productsDeleted(let ids) where ids.contains(productId):
            load.cancel()
            tasks.cancelAll()
            failedPart = "product"
            phase = .failed(message: "This product is no longer available.", retryable: false)
        case .orderPlaced(let order, _) where phase == .loaded && order.lines.contains { $0.productId == productId }:
            // Its stock changed.
            reloadProduct(productId)
        case .resync where phase == .loaded:
            reloadProduct(productId)
        default:
            break
        }
    }
}
