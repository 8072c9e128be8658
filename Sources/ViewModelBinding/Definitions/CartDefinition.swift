import JSON
import Shop
import ShopFeatures

extension CartViewModel: ScreenViewModel {}

// It reports the changes of what its state reads: the binding does not observe them (a cart change costs
// ~22k instructions fewer per open cart screen; BENCHMARKS.md, round 22).
extension CartViewModel: StateChangeReporting {}

/// Params naming a product and a quantity.
struct LineArguments: Decodable {
    var productId: String
    var quantity: Int
}

extension ViewModelDefinition<ShopEnvironment> {
    /// `cart`: lines, totals and checkout.
    public static let cart = ViewModelDefinition.screen(
        "cart",
        actions: [
            .action("refresh", summary: "Loads the cart again (the retry after a failed load).", on: CartViewModel.self) { model in
                try await model.refresh().resultMembers()
            },
            .action("add", summary: "Adds a quantity of a product, merging with its line.", stores: true,
                    on: CartViewModel.self, arguments: LineArguments.self) { model, arguments in
                try await model.add(productId: arguments.productId, quantity: arguments.quantity)
                return [:]
            },
            .action("setQuantity", summary: "Sets a line's quantity (0 removes it); above stock or the maximum is refused.", stores: true,
                    on: CartViewModel.self, arguments: LineArguments.self) { model, arguments in
                try await model.setQuantity(productId: arguments.productId, quantity: arguments.quantity)
                return [:]
            },
            .action("remove", summary: "Removes a line.", stores: true, on: CartViewModel.self, arguments: ProductArguments.self) { model, arguments in
                try await model.remove(productId: arguments.productId)
                return [:]
            },
            .action("clear", summary: "Empties the cart.", stores: true, on: CartViewModel.self) { model in
                try await model.clear()
                return [:]
            },
            .action("dismissNotices", summary: "Forgets the notices about lines that went (deleted products).",
                    on: CartViewModel.self) { model in
                model.dismissNotices()
                return [:]
            },
            .action("checkout", summary: "Places the order in one transaction: order written, stock decremented, cart emptied; answers orderId. Needs a signed-in session.", stores: true,
                    on: CartViewModel.self) { model in
                // The order it placed, not `lastOrder`: a change sent after it may have cleared that already.
                try await model.checkout().map { ["orderId": .string($0.id)] } ?? [:]
            },
        ],
        make: { environment in CartViewModel(services: environment.services, session: environment.session) })
}
