import Foundation
import Observation
import Shop

/// The form that creates a product.
///
/// Validation runs continuously; `errors` shows the messages of the fields the user has edited, and
/// of every field once a submission was tried. `submit()` on an invalid form is refused with
/// `validationFailed`, its `details` naming every invalid field (and `errors` now shows them all). A
/// succeeded form is not submitted twice: changing a field starts a new product, `reset()` empties it.
/// A created product is published on the feed by the catalog service, so open catalogs reload.
@MainActor @Observable
public final class ProductFormViewModel {
    public private(set) var phase: Phase = .idle
    public private(set) var fields = ProductFormFields()
    public private(set) var touched: Set<ProductFormField> = []
    public private(set) var categories: [Category] = []
    public private(set) var submitPhase: SubmitPhase = .idle
    public private(set) var createdProductId: String?

    @ObservationIgnored private let catalog: any CatalogService
    @ObservationIgnored private let load = ReplaceableLoad()
    @ObservationIgnored private var submitTask: Task<(any Error)?, Never>?

    /// Creates the ViewModel; categories load on ``appear()``.
    public init(catalog: any CatalogService) {
        self.catalog = catalog
    }

    /// Creates the ViewModel from the service container.
    public convenience init(services: ShopServices) {
        self.init(catalog: services.catalog)
    }

    // MARK: State

    /// Every invalid field's message, touched or not.
    public var fieldErrors: [ProductFormField: String] {
        var errors: [ProductFormField: String] = [:]
        errors[.name] = ProductRules.nameError(fields.name)
        errors[.description] = ProductRules.descriptionError(fields.description)
        errors[.price] = ProductRules.priceTextError(fields.price)
        errors[.category] = categoryError
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
            categories: categories.map(CategoryOption.init))
    }

    // MARK: Lifecycle

    /// Loads the categories (phase becomes `loading` at once). Calling it again retries a failed load
    /// and otherwise does nothing.
    public func appear() {
        guard phase != .loading, phase != .loaded else { return }
        startLoad()
    }

    /// Cancels every task.
    public func close() {
        load.cancel()
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
        load.start(phase: .init(get: { [weak self] in self?.phase }, set: { [weak self] in self?.phase = $0 })) {
            [weak self, catalog] in
            do {
                let summaries = try await catalog.categories()
                guard let self, !Task.isCancelled else { return false }
                self.categories = summaries.map(\.category)
                self.phase = .loaded
            } catch {
                guard let self, !Task.isCancelled, let info = Failure.loadError(error) else { return false }
                self.phase = .failed(info)
            }
            return true
        }
    }

    // MARK: Intents

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


    /// Creates the product; on success `createdProductId` names it.
    /// - Throws: ``ShopError`` `validationFailed` (with every invalid field in `details`; `errors` now
    ///   shows every field's message, as a form does once submit is pressed), `alreadySubmitting`,
    ///   `alreadySubmitted` when this form already created its product, or the catalog's refusal. Operational
    ///   failures show as `submitPhase` `failed` with `error`.
    public func submit() async throws {
        guard submitTask == nil else { throw ShopError.alreadySubmitting }
        if submitPhase == .succeeded, let createdProductId { throw ShopError.alreadySubmitted(productId: createdProductId) }
        if case .failed(let message, let retryable) = phase {
            throw ShopError.loadFailed("categories", message: "The categories could not be loaded: \(message)", retryable: retryable)
        }
        let errors = fieldErrors
        guard errors.isEmpty, let price = Money(decimalString: fields.price.trimmingCharacters(in: .whitespaces)) else {
            touched = Set(ProductFormField.allCases)
            throw ShopError.validationFailed(Dictionary(uniqueKeysWithValues: errors.map { ($0.key.rawValue, $0.value) }))
        }
        let newProduct = NewProduct(
            name: fields.name.trimmingCharacters(in: .whitespacesAndNewlines), description: fields.description,
            price: price, categoryId: fields.category)
        let previousPhase = submitPhase
        submitPhase = .submitting
        let task = Task { [weak self, catalog] () -> (any Error)? in
            do {
                let product = try await catalog.create(newProduct)
                self?.createdProductId = product.id
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

    /// Empties the form; if the categories failed to load, loads them again.
    /// - Throws: ``ShopError`` `alreadySubmitting` while a submission runs.
    public func reset() throws {
        guard submitTask == nil else { throw ShopError.alreadySubmitting }
        fields = ProductFormFields()
        touched = []
        submitPhase = .idle
        createdProductId = nil
        if case .failed = phase { startLoad() }
    }
}
