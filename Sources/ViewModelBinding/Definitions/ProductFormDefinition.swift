import JSON
import Shop
import ShopFeatures

extension ProductFormViewModel: ScreenViewModel {}

/// `productForm/setField` params.
struct SetFieldArguments: Decodable {
    var field: ProductFormField
    var value: String
}

/// `viewModel/open` args of a `productForm`: a product id for edit mode, none for create mode.
struct ProductFormArguments: Decodable {
    var productId: String?
}

extension ViewModelDefinition<ShopEnvironment> {
    /// `productForm`: creating a product, or (with `productId`) changing one, with per-field validation.
    public static let productForm = ViewModelDefinition.screen(
        "productForm", arguments: ProductFormArguments.self,
        actions: [
            .action("setField", summary: "Sets one field and revalidates; refused while submitting.",
                    on: ProductFormViewModel.self, arguments: SetFieldArguments.self) { model, arguments in
                try model.setField(arguments.field, arguments.value)
                return [:]
            },
            .action("submit", summary: "Creates the product (edit mode: stores the changed product); refused while invalid (every error then shows), submitting, or already submitted.", stores: true,
                    on: ProductFormViewModel.self) { model in
                try await model.submit()
                return [:]
            },
            .action("reset", summary: "Clears the form, or in edit mode puts back the stored product (and loads again if the load failed).",
                    on: ProductFormViewModel.self) { model in
                try model.reset()
                return [:]
            },
            .action("refresh", summary: "Loads the categories again (the retry after a failed load).",
                    on: ProductFormViewModel.self) { model in
                try await model.refresh().resultMembers()
            },
        ],
        make: { environment, arguments in ProductFormViewModel(services: environment.services, productId: arguments.productId) })
}
