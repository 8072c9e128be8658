import JSON
import Shop
import ShopFeatures

extension ProductDetailViewModel: ScreenViewModel {}

extension ViewModelDefinition {
    /// `productDetail`: one product, its favourite status, a quantity and add-to-cart.
    public static func productDetail(services: ShopServices, clock: any Clock<Duration>) -> ViewModelDefinition {
        struct Arguments: Decodable { var productId: String }
        return .screen(
            "productDetail", summary: "One product: favourite, quantity and add to cart.",
            arguments: [param("productId", ["type": "string"])],
            stateSchemaName: "ProductDetailState",
            actions: [
                .action("refresh", summary: "Loads the product, its favourite mark and the cart's units again (the retry after a failed load).",
                        on: ProductDetailViewModel.self) { model in
                    try await model.refresh().resultMembers()
                },
                .action("toggleFavorite", summary: "Marks or unmarks the product as a favourite (optimistic; reverts on failure).",
                        on: ProductDetailViewModel.self) { model in
                    try await model.toggleFavorite()
                    return [:]
                },
                .action("incrementQuantity", summary: "One more, up to the product's maximum and stock.",
                        on: ProductDetailViewModel.self) { model in
                    try model.incrementQuantity()
                    return [:]
                },
                .action("decrementQuantity", summary: "One fewer, down to 1.", on: ProductDetailViewModel.self) { model in
                    try model.decrementQuantity()
                    return [:]
                },
                .action("addToCart", summary: "Adds the chosen quantity to the cart; didAddToCart shows for 2 s.",
                        on: ProductDetailViewModel.self) { model in
                    try await model.addToCart()
                    return [:]
                },
            ],
            make: { args in
                let arguments = try JSONValueDecoder().decode(Arguments.self, from: args)
                return ProductDetailViewModel(productId: arguments.productId, services: services, clock: clock)
            })
    }
}
