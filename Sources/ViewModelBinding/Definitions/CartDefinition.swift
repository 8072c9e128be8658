import JSON
import Shop
import ShopFeatures

extension CartViewModel: ScreenViewModel {}

extension ViewModelDefinition {
    /// `cart`: lines, totals and checkout.
    public static func cart(services: ShopServices) -> ViewModelDefinition {
        struct Line: Decodable {
            var productId: String
            var quantity: Int
        }
        struct Product: Decodable { var productId: String }
        let line = [param("productId", ["type": "string"]), param("quantity", ["type": "integer"])]
        return .screen(
            "cart", summary: "The cart: lines, subtotal, tax, total and checkout.",
            stateSchemaName: "CartState",
            actions: [
                .action("refresh", summary: "Loads the cart again (the retry after a failed load).", on: CartViewModel.self) { model in
                    try await model.refresh().resultMembers()
                },
                .action("add", summary: "Adds a quantity of a product, merging with its line.", params: line,
                        on: CartViewModel.self, arguments: Line.self) { model, arguments in
                    try await model.add(productId: arguments.productId, quantity: arguments.quantity)
                    return [:]
                },
                .action("setQuantity", summary: "Sets a line's quantity (0 removes it); above stock or the maximum is refused.",
                        params: line, on: CartViewModel.self, arguments: Line.self) { model, arguments in
                    try await model.setQuantity(productId: arguments.productId, quantity: arguments.quantity)
                    return [:]
                },
                .action("remove", summary: "Removes a line.", params: [param("productId", ["type": "string"])],
                        on: CartViewModel.self, arguments: Product.self) { model, arguments in
                    try await model.remove(productId: arguments.productId)
                    return [:]
                },
                .action("clear", summary: "Empties the cart.", on: CartViewModel.self) { model in
                    try await model.clear()
                    return [:]
                },
                .action("dismissNotices", summary: "Forgets the notices about lines that went (deleted products).",
                        on: CartViewModel.self) { model in
                    model.dismissNotices()
                    return [:]
                },
                .action("checkout", summary: "Places the order in one transaction: order written, stock decremented, cart emptied.",
                        on: CartViewModel.self) { model in
                    try await model.checkout()
                    return model.state.lastOrder.map { ["orderId": .string($0.id)] } ?? [:]
                },
            ],
            make: { _ in CartViewModel(services: services) })
    }
}
