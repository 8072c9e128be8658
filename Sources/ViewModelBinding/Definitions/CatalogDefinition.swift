import JSON
import Shop
import ShopFeatures

extension CatalogViewModel: ScreenViewModel {}

/// `catalog/search` params.
struct SearchArguments: Decodable { var query: String }
/// `catalog/setCategory` params: a category id, or null (or absent) for all.
struct CategoryArguments: Decodable { var category: String? }
/// `catalog/setSort` params.
struct SortArguments: Decodable { var sort: ProductSort }
/// Params naming one product.
struct ProductArguments: Decodable { var productId: String }

extension ViewModelDefinition<ShopEnvironment> {
    /// `catalog`: the product list with search, category, sort, paging and selection.
    public static let catalog = ViewModelDefinition.screen(
        "catalog",
        actions: [
            .action("refresh", summary: "Reloads the first page (the retry after a failed load); superseded: true if replaced.",
                    on: CatalogViewModel.self) { model in
                try await model.refresh().resultMembers()
            },
            .action("search", summary: "Sets the query at once (phase loading) and searches after 300 ms of quiet; superseded: true if replaced.",
                    on: CatalogViewModel.self, arguments: SearchArguments.self) { model, arguments in
                try await model.search(arguments.query).resultMembers()
            },
            .action("setCategory", summary: "Shows one category (null: all); superseded: true if replaced.",
                    on: CatalogViewModel.self, arguments: CategoryArguments.self) { model, arguments in
                try await model.setCategory(arguments.category).resultMembers()
            },
            .action("setSort", summary: "Sorts by name, price or newest; superseded: true if replaced.",
                    on: CatalogViewModel.self, arguments: SortArguments.self) { model, arguments in
                try await model.setSort(arguments.sort).resultMembers()
            },
            .action("loadMore", summary: "Appends the next page; a failure shows in loadMorePhase and calling again retries; superseded: true if a new list replaced it.",
                    on: CatalogViewModel.self) { model in
                try await model.loadMore().resultMembers()
            },
            .action("toggleSelection", summary: "Selects or deselects a listed (loaded) product; another is refused notListed.",
                    on: CatalogViewModel.self, arguments: ProductArguments.self) { model, arguments in
                try model.toggleSelection(arguments.productId)
                return [:]
            },
            .action("selectAll", summary: "Selects every listed product: the pages loaded so far, not every match.",
                    on: CatalogViewModel.self) { model in
                model.selectAll()
                return [:]
            },
            .action("clearSelection", summary: "Clears the selection.", on: CatalogViewModel.self) { model in
                model.clearSelection()
                return [:]
            },
            .action("deleteSelected", summary: "Deletes the selected products and reloads.", stores: true, on: CatalogViewModel.self) { model in
                try await model.deleteSelected()
                return [:]
            },
        ],
        make: { environment in CatalogViewModel(services: environment.services, clock: environment.clock) })
}
