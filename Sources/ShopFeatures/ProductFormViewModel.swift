import Foundation
import Observation
import Shop

/// The form that creates a product.
///
/// Validation runs continuously; `errors` shows the messages of the fields the user has edited.
/// `submit()` on an invalid form is refused with `validationFailed`, its `details` naming every
/// invalid field, and the state does not change. A created product is published on the feed by the
/// catalog service, so open catalogs reload.
@MainActor @Observable
public final class ProductFormViewModel {
    public private(set) var phase: Phase = .idle
    public private(set) var fields = ProductFormFields()
    public private(set) var touched: Set<ProductFormField> = []
    public private(set) var categories: [Category] = []
    public private(set) var submitPhase: SubmitPhase = .idle
    public private(set) var createdProductId: String?

    @ObservationIgnored private let catalog: any CatalogService
    @ObservationIgnored private var loadTask: Task<Void, Never>?
    @ObservationIgnored private var submitTask: Task<ShopError?, Never>?

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
        phase = .loading
        loadTask = Task { [weak self, catalog] in
            do {
                let summaries = try await catalog.categories()
                guard let self, !Task.isCancelled else { return }
                self.categories = summaries.map(\.category)
                self.phase = .loaded
            } catch {
                guard let self, !Task.isCancelled, let info = Failure.loadError(error) else { return }
                self.phase = .failed(info)
            }
            self?.loadTask = nil
        }
    }

    /// Cancels every task.
    public func close() {
        loadTask?.cancel()
        loadTask = nil
        submitTask?.cancel()
        if phase == .loading { phase = .idle }
    }

    // MARK: Intents

    /// Sets a field's value and marks it as edited.
    public func setField(_ field: ProductFormField, _ value: String) {
        fields[field] = value
        touched.insert(field)
    }

    /// Sets a field by its wire name.
    /// - Throws: ``ShopError`` `unknownField` (nothing changes).
    public func setField(_ name: String, _ value: String) throws {
        guard let field = ProductFormField(rawValue: name) else { throw ShopError.unknownField(name) }
        setField(field, value)
    }

    /// Creates the product; on success `createdProductId` names it.
    /// - Throws: ``ShopError`` `validationFailed` (with every invalid field in `details`),
    ///   `alreadySubmitting`, or the catalog's refusal; the state does not change. Operational failures
    ///   show as `submitPhase` `failed` with `error`.
    public func submit() async throws {
        guard submitTask == nil else { throw ShopError.alreadySubmitting }
        let errors = fieldErrors
        guard errors.isEmpty, let price = Money(decimalString: fields.price.trimmingCharacters(in: .whitespaces)) else {
            throw ShopError.validationFailed(Dictionary(uniqueKeysWithValues: errors.map { ($0.key.rawValue, $0.value) }))
        }
        let newProduct = NewProduct(
            name: fields.name.trimmingCharacters(in: .whitespacesAndNewlines), description: fields.description,
            price: price, categoryId: fields.category)
        let previousPhase = submitPhase
        submitPhase = .submitting
        let task = Task { [weak self, catalog] () -> ShopError? in
            do {
                let product = try await catalog.create(newProduct)
                self?.createdProductId = product.id
                self?.submitPhase = .succeeded
            } catch {
                switch Failure(error) {
                case .cancelled:
                    self?.submitPhase = previousPhase
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

    /// Empties the form.
    /// - Throws: ``ShopError`` `alreadySubmitting` while a submission runs.
    public func reset() throws {
        guard submitTask == nil else { throw ShopError.alreadySubmitting }
        fields = ProductFormFields()
        touched = []
        submitPhase = .idle
        createdProductId = nil
    }
}
