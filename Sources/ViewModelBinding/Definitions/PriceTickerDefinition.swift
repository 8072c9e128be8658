import JSON
import Shop
import ShopFeatures

extension PriceTickerViewModel: ScreenViewModel {}

/// `viewModel/open` args of a `priceTicker`.
struct PriceTickerArguments: Decodable { var productId: String }

extension ViewModelDefinition<ShopEnvironment> {
    /// `priceTicker`: one product's current price and stock and its last 100 prices, following stored
    /// changes from every server.
    public static let priceTicker = ViewModelDefinition.screen(
        "priceTicker", arguments: PriceTickerArguments.self,
        actions: [
            .action("connect", summary: "Loads the product and its history again and follows their changes (open connects; nothing happens when connected).",
                    on: PriceTickerViewModel.self) { model in
                model.connect()
                return [:]
            },
            .action("disconnect", summary: "Stops following changes; what is shown stays.",
                    on: PriceTickerViewModel.self) { model in
                model.disconnect()
                return [:]
            },
            .action("refresh", summary: "Loads the product and its history again (connected or not).",
                    on: PriceTickerViewModel.self) { model in
                try await model.refresh().resultMembers()
            },
        ],
        make: { environment, arguments in PriceTickerViewModel(productId: arguments.productId, services: environment.services) })
}
