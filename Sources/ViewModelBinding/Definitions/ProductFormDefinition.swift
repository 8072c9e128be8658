import JSON
import Shop
import ShopFeatures

extension ProductFormViewModel: ScreenViewModel {}

extension ViewModelDefinition {
    /// `productForm`: creating a product, with per-field validation.
    public static func productForm(services: ShopServices) -> ViewModelDefinition {
        struct SetField: Decodable {
            var field: String
            var value: String
        }
        return .screen(
            "productForm", summary: "Creates a product: fields, per-field validation, submit.",
            stateSchemaName: "ProductFormState",
            actions: [
                .action(
                    "setField", summary: "Sets one field (name, description, price, category) and revalidates.",
                    params: [
                        param("field", ["type": "string", "enum": ["name", "description", "price", "category"]]),
                        param("value", ["type": "string"]),
                    ],
                    on: ProductFormViewModel.self, arguments: SetField.self
                ) { model, arguments in
                    try model.setField(arguments.field, arguments.value)
                    return [:]
                },
                .action("submit", summary: "Creates the product; refused while invalid (every error then shows), submitting, or already submitted.",
                        on: ProductFormViewModel.self) { model in
                    try await model.submit()
                    return [:]
                },
                .action("reset", summary: "Clears the form (and loads the categories again if they failed).",
                        on: ProductFormViewModel.self) { model in
                    try model.reset()
                    return [:]
                },
                .action("refresh", summary: "Loads the categories again (the retry after a failed load).",
                        on: ProductFormViewModel.self) { model in
                    try await model.refresh().resultMembers()
                },
            ],
            make: { _ in ProductFormViewModel(services: services) })
    }
}
