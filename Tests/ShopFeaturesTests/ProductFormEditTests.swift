import Shop
import TestWaits
import Testing
@testable import ShopFeatures

/// `productForm` in edit mode: the stored product in the fields, the same validation, `submit` stores the
/// fields the user changed, and changes stored elsewhere show in the fields the user has not changed.
@Suite @MainActor struct ProductFormEditTests {
    let catalog = CatalogServiceDouble()
    let events = ShopEvents()
    let stored = Fixture.product(7, price: 1_250, stock: 4)

    func opened() async -> ProductFormViewModel {
        catalog.categories.returns([Fixture.books, Fixture.garden])
        catalog.product.returns(stored)
        let viewModel = ProductFormViewModel(catalog: catalog, productId: stored.id, events: events)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        return viewModel
    }

    func state(
        fields: ProductFormFields, errors: [String: String] = [:], isValid: Bool = true, hasChanges: Bool = false,
        submitPhase: SubmitPhaseName = .idle, phase: PhaseName = .loaded, error: ErrorInfo? = nil
    ) -> ProductFormState {
        ProductFormState(
            phase: phase, error: error, fields: fields, errors: errors, isValid: isValid, submitPhase: submitPhase,
            createdProductId: nil,
            categories: [CategoryOption(Fixture.books.category), CategoryOption(Fixture.garden.category)],
            mode: .edit, productId: stored.id, hasChanges: hasChanges)
    }

    var storedFields: ProductFormFields {
        var fields = ProductFormFields()
        fields.name = "Product 7"
        fields.description = "Description 7"
        fields.price = "12.50"
        fields.category = "books"
        fields.stock = "4"
        return fields
    }

    @Test func loadsTheProductIntoTheFields() async throws {
        let viewModel = await opened()
        #expect(viewModel.state == state(fields: storedFields))
        #expect(catalog.product.calls == [stored.id])
    }

    @Test func validatesAsTheCreateFormAndSubmitStoresTheChange() async throws {
        let viewModel = await opened()
        try viewModel.setField(.stock, "x")
        var fields = storedFields
        fields.stock = "x"
        #expect(viewModel.state == state(
            fields: fields, errors: ["stock": "Stock must be a whole number from 0 to 1000000."], isValid: false, hasChanges: true))
        let refused = await #expect(throws: ShopError.self) { try await viewModel.submit() }
        #expect(refused?.reason == "validationFailed")

        try viewModel.setField(.stock, "9")
        try viewModel.setField(.price, "11.00")
        var changed = stored
        changed.stock = 9
        changed.price = Money(minorUnits: 1_100)
        catalog.update.returns(changed)
        try await viewModel.submit()
        #expect(catalog.update.calls == [.init(id: stored.id, update: ProductUpdate(price: Money(minorUnits: 1_100), stock: 9))])
        fields.stock = "9"
        fields.price = "11.00"
        #expect(viewModel.state == state(fields: fields, submitPhase: .succeeded))
    }

    @Test func aChangeStoredElsewhereShowsInTheFieldsTheUserHasNotChanged() async throws {
        let viewModel = await opened()
        var elsewhere = stored
        elsewhere.price = Money(minorUnits: 999)
        events.publish(.productChanged(elsewhere))
        var fields = storedFields
        fields.price = "9.99"
        #expect(viewModel.state == state(fields: fields))

        try viewModel.setField(.name, "My New Name")
        elsewhere.stock = 1
        elsewhere.name = "Their Name"
        events.publish(.productChanged(elsewhere))
        fields.name = "My New Name"  // the user's edit stays
        fields.stock = "1"  // a field the user did not change shows the stored value
        #expect(viewModel.state == state(fields: fields, hasChanges: true))

        try viewModel.reset()  // back to the product as stored now
        fields = storedFields
        fields.name = "Their Name"
        fields.price = "9.99"
        fields.stock = "1"
        #expect(viewModel.state == state(fields: fields))

        events.publish(.productChanged(Fixture.product(8)))  // another product: nothing changes
        #expect(viewModel.state == state(fields: fields))
    }

    @Test func submittingAnEditLeavesAStockChangedElsewhereAsStored() async throws {
        let viewModel = await opened()
        try viewModel.setField(.description, "Now with a handle.")
        var sold = stored
        sold.stock = 2  // a checkout elsewhere, while the user types
        catalog.product.returns(sold)
        events.publish(.orderPlaced(Fixture.order(1, lines: [Fixture.line(stored, quantity: 2)]), shopper: Fixture.shopper))
        await events.settled()
        #expect(viewModel.fields.stock == "2")

        var saved = sold
        saved.description = "Now with a handle."
        catalog.update.returns(saved)
        try await viewModel.submit()
        #expect(catalog.update.calls == [.init(id: stored.id, update: ProductUpdate(description: "Now with a handle."))])
        #expect(viewModel.state.hasChanges == false)
    }

    @Test func aChangeStoredWhileTheFormLoadsShowsAfterIt() async throws {
        let gate = Gate()
        let current = Locked(stored)
        catalog.categories.returns([Fixture.books, Fixture.garden])
        catalog.product.handle { _ in
            let value = current.withLock { $0 }
            await gate.wait()
            return value
        }
        let viewModel = ProductFormViewModel(catalog: catalog, productId: stored.id, events: events)
        viewModel.appear()
        await settle { gate.waiting == 1 }

        var changed = stored
        changed.stock = 1
        current.withLock { $0 = changed }
        events.publish(.productChanged(changed))
        gate.open()
        await events.settled()
        var fields = storedFields
        fields.stock = "1"
        #expect(viewModel.state == state(fields: fields))
    }

    @Test func aDeletedOrMissingProductFailsTheForm() async throws {
        let viewModel = await opened()
        events.publish(.productsDeleted([stored.id]))
        #expect(viewModel.state.phase == .failed)
        #expect(viewModel.state.error == ErrorInfo(message: "This product is no longer available.", retryable: false))
        await #expect(throws: ShopError.loadFailed("product", message: "This product is no longer available.", retryable: false)) {
            try await viewModel.submit()
        }

        catalog.product.fails(ShopError.productNotFound("p-0404"))
        let missing = ProductFormViewModel(catalog: catalog, productId: "p-0404", events: events)
        missing.appear()
        await settle { missing.phase != .loading }
        #expect(missing.state.phase == .failed)
        #expect(missing.state.error?.retryable == false)
    }

    @Test func anEditFormWhoseCategoriesFailedSaysSo() async throws {
        catalog.categories.fails(ShopError.serviceUnavailable("catalog"))
        catalog.product.returns(stored)
        let viewModel = ProductFormViewModel(catalog: catalog, productId: stored.id, events: events)
        viewModel.appear()
        await settle { viewModel.phase.name == .failed }
        let refusal = await #expect(throws: ShopError.self) { try await viewModel.submit() }
        #expect(refusal?.reason == "loadFailed")
        #expect(refusal?.details["content"] == "categories")
    }

    @Test func closingUnsubscribes() async throws {
        let before = events.subscriberCount
        let viewModel = await opened()
        #expect(events.subscriberCount == before + 1)
        viewModel.close()
        #expect(events.subscriberCount == before)
    }
}
