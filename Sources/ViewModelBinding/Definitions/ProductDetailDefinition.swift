import JSON
import Shop
import ShopFeatures

extension ProductDetailViewModel: ScreenViewModel {}

// It reports the changes of what its state reads, as the cart does: its page changes with every change of its
// product's line in the cart, and a tracked read of its state cost ~48k instructions (BENCHMARKS.md, round 23).
extension ProductDetailViewModel: StateChangeReporting {}

/// `viewModel/open` args of a `productDetail`.
struct ProductDetailArguments: Decodable { var productId: String }

extension ViewModelDefinition<ShopEnvironment> {
    /// `productDetail`: one product, its favourite status, a quantity and add-to-cart.
    public static let productDetail = ViewModelDefinition.screen(
        "productDetail", arguments: ProductDetailArguments.self,
        actions: [
            .action("refresh", summary: "Loads the product, its favourite mark and the cart's units again (the retry after a failed load).",
                    on: ProductDetailViewModel.self) { model in
                try await model.refresh().resultMembers()
            },
            .action("toggleFavorite", summary: "Marks or unmarks the product as a favourite (optimistic; reverts on failure).", stores: true,
                    on: ProductDetailViewModel.self) { model in
                try await model.toggleFavorite()
                return [:]
            },
            .action("incrementQuantity", summary: "One more, up to the product's maximum and stock less the cart's units.",
                    on: ProductDetailViewModel.self) { model in
                try model.incrementQuantity()
                return [:]
            },
            .action("decrementQuantity", summary: "One fewer, down to 1.", on: ProductDetailViewModel.self) { model in
                try model.decrementQuantity()
                return [:]
            },
            .action("addToCart", summary: "Adds the chosen quantity to the cart; didAddToCart shows for 2 s.", stores: true,
                    on: ProductDetailViewModel.self) { model in
                try await model.addToCart()
                return [:]
            },
        ],
        make: { environment, arguments in
            ProductDetailViewModel(
                productId: arguments.productId, services: environment.services, session: environment.session, clock: environment.clock)
        })
}
