import Shop
import TestWaits
import Testing
@testable import ShopFeatures

@Suite @MainActor struct ProductFormViewModelTests {
    let catalog = CatalogServiceDouble()

    func appeared() async -> ProductFormViewModel {
        catalog.categories.returns([Fixture.books, Fixture.garden])
        let viewModel = ProductFormViewModel(catalog: catalog)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        return viewModel
    }

    func state(
        fields: ProductFormFields = ProductFormFields(), errors: [String: String] = [:], isValid: Bool = false,
        submitPhase: SubmitPhaseName = .idle, error: ErrorInfo? = nil, createdProductId: String? = nil
    ) -> ProductFormState {
        ProductFormState(
            phase: .loaded, error: error, fields: fields, errors: errors, isValid: isValid, submitPhase: submitPhase,
            createdProductId: createdProductId,
            categories: [CategoryOption(Fixture.books.category), CategoryOption(Fixture.garden.category)],
            hasChanges: fields != ProductFormFields())
    }

    func fill(_ viewModel: ProductFormViewModel) throws {
        try viewModel.setField(.name, "Oak Shelf")
        try viewModel.setField(.description, "Solid oak.")
        try viewModel.setField(.price, "49.90")
        try viewModel.setField(.category, "garden")
    }

    var filled: ProductFormFields {
        var fields = ProductFormFields()
        fields.name = "Oak Shelf"
        fields.description = "Solid oak."
        fields.price = "49.90"
        fields.category = "garden"
        return fields
    }

    @Test func showsErrorsOnlyForEditedFields() async throws {
        let viewModel = await appeared()
        #expect(viewModel.state == state())

        try viewModel.setField(.name, "Ok")
        try viewModel.setField(.price, "1.999")
        var fields = ProductFormFields()
        fields.name = "Ok"
        fields.price = "1.999"
        #expect(viewModel.state == state(fields: fields, errors: [
            "name": "Name must be at least 3 characters.",
            "price": "Price must be a number with at most two decimals, such as 12.50.",
        ]))
    }

    @Test(arguments: [
        ("price", "0", "Price must be greater than zero."),
        ("price", "-1", "Price must be greater than zero."),
        ("price", "1000000.01", "Price must be at most 1000000.00."),
        ("price", "abc", "Price must be a number with at most two decimals, such as 12.50."),
        ("price", "1000000.01", "Price must be at most 1000000.00."),
        ("name", "  ", "Name is required."),
        ("category", "toys", "Choose one of the categories."),
        ("description", String(repeating: "x", count: 501), "Description must be at most 500 characters."),
        ("name", String(repeating: "x", count: 121), "Name must be at most 120 characters."),
        ("name", String(repeating: "x", count: 500), "Name must be at most 120 characters."),
        ("name", "Oak\u{7}Shelf", "Name must not contain control characters."),
        ("stock", "-1", "Stock must be a whole number from 0 to 1000000."),
        ("stock", "1.5", "Stock must be a whole number from 0 to 1000000."),
        ("stock", "1000001", "Stock must be at most 1000000."),
        ("stock", "", "Stock is required."),
    ])
    func validatesEachField(field: String, value: String, message: String) async throws {
        let viewModel = await appeared()
        try fill(viewModel)
        try viewModel.setField(try #require(ProductFormField(rawValue: field)), value)
        #expect(viewModel.state.errors == [field: message])
        #expect(!viewModel.state.isValid)
    }

    @Test func submittingAnInvalidFormIsRefusedAndShowsEveryFieldError() async throws {
        let viewModel = await appeared()
        try viewModel.setField(.name, "Oak Shelf")
        let error = await #expect(throws: ShopError.self) { try await viewModel.submit() }
        #expect(error?.reason == "validationFailed")
        #expect(error?.details.keys.sorted() == ["category", "price"])
        var fields = ProductFormFields()
        fields.name = "Oak Shelf"
        // The errors the refusal lists are the ones the state shows, untouched fields included.
        #expect(viewModel.state == state(fields: fields, errors: [
            "price": "Price is required.", "category": "Category is required.",
        ]))
        #expect(catalog.create.calls.isEmpty)
    }

    @Test func anUntouchedFormSubmittedShowsAllItsErrors() async throws {
        let viewModel = await appeared()
        let error = await #expect(throws: ShopError.self) { try await viewModel.submit() }
        #expect(viewModel.state.errors == error?.details)
        #expect(viewModel.state.errors.keys.sorted() == ["category", "name", "price"])
    }

    @Test func aSucceededFormIsNotSubmittedTwiceAndAnEditStartsANewProduct() async throws {
        let viewModel = await appeared()
        try fill(viewModel)
        let created = Fixture.product(241)
        catalog.create.returns(created)
        try await viewModel.submit()

        let twice = await #expect(throws: ShopError.self) { try await viewModel.submit() }
        #expect(twice?.reason == "alreadySubmitted")
        #expect(twice?.details["productId"] == created.id)
        #expect(catalog.create.calls.count == 1)
        #expect(viewModel.state == state(fields: filled, isValid: true, submitPhase: .succeeded, createdProductId: created.id))

        try viewModel.setField(.name, "Oak Shelf, large")
        var fields = filled
        fields.name = "Oak Shelf, large"
        #expect(viewModel.state == state(fields: fields, isValid: true))
        try await viewModel.submit()
        #expect(catalog.create.calls.count == 2)
    }

    @Test func fieldsCannotChangeWhileSubmitting() async throws {
        let viewModel = await appeared()
        try fill(viewModel)
        let gate = Gate()
        catalog.create.handle { [gate] _ in await gate.wait(); return Fixture.product(241) }
        let submit = Task { try await viewModel.submit() }
        await settle { gate.waiting == 1 }
        let error = #expect(throws: ShopError.self) { try viewModel.setField(.name, "Something else") }
        #expect(error?.reason == "alreadySubmitting")
        gate.open()
        try await submit.value
        #expect(viewModel.state.fields == filled)
    }

    @Test func aFailedCategoriesLoadIsRetriedByRefreshOrReset() async throws {
        catalog.categories.fails(ShopError.serviceUnavailable("catalog"))
        let viewModel = ProductFormViewModel(catalog: catalog)
        viewModel.appear()
        await settle { viewModel.phase != .loading }
        #expect(viewModel.state.phase == .failed)

        catalog.categories.returns([Fixture.books, Fixture.garden])
        #expect(await viewModel.refresh() == .completed)
        #expect(viewModel.state == state())

        catalog.categories.fails(ShopError.serviceUnavailable("catalog"))
        let second = ProductFormViewModel(catalog: catalog)
        second.appear()
        await settle { second.phase != .loading }
        #expect(second.state.phase == .failed)
        catalog.categories.returns([Fixture.books, Fixture.garden])
        try second.reset()
        await settle { second.phase == .loaded }
        #expect(second.state == state())
    }

    @Test func submittingCreatesTheProductOnceAndResetEmptiesTheForm() async throws {
        let viewModel = await appeared()
        try fill(viewModel)
        #expect(viewModel.state == state(fields: filled, isValid: true))
        let gate = Gate()
        let created = Fixture.product(241)
        catalog.create.handle { _ in await gate.wait(); return created }

        let submit = Task { try await viewModel.submit() }
        await settle { gate.waiting == 1 }
        #expect(viewModel.state == state(fields: filled, isValid: true, submitPhase: .submitting))
        let again = await #expect(throws: ShopError.self) { try await viewModel.submit() }
        #expect(again?.reason == "alreadySubmitting")
        gate.open()
        try await submit.value

        #expect(viewModel.state == state(fields: filled, isValid: true, submitPhase: .succeeded, createdProductId: created.id))
        #expect(catalog.create.calls == [NewProduct(
            name: "Oak Shelf", description: "Solid oak.", price: Money(minorUnits: 4_990), categoryId: "garden")])

        try viewModel.reset()
        #expect(viewModel.state == state())
    }

    @Test func anUnavailableCatalogShowsAsAFailedSubmission() async throws {
        let viewModel = await appeared()
        try fill(viewModel)
        catalog.create.fails(ShopError.serviceUnavailable("catalog"))
        try await viewModel.submit()
        #expect(viewModel.state == state(
            fields: filled, isValid: true, submitPhase: .failed,
            error: ErrorInfo(message: ShopError.serviceUnavailable("catalog").message, retryable: true)))
    }

    @Test func withoutCategoriesTheFormIsInvalid() async throws {
        catalog.categories.fails(ShopError.serviceUnavailable("catalog"))
        let viewModel = ProductFormViewModel(catalog: catalog)
        viewModel.appear()
        #expect(viewModel.state.phase == .loading)
        await settle { viewModel.phase != .loading }
        try fill(viewModel)
        #expect(viewModel.state.phase == .failed)
        #expect(viewModel.state.errors == ["category": "Categories could not be loaded; refresh to try again."])
        let submit = await #expect(throws: ShopError.self) { try await viewModel.submit() }
        #expect(submit?.reason == "loadFailed")
        #expect(submit?.details["content"] == "categories")
        #expect(submit?.isRetryable == true)
    }
}
