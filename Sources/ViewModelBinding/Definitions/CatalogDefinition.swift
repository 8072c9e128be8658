import JSON
import Shop
import ShopFeatures

extension CatalogViewModel: ScreenViewModel {}

extension ViewModelDefinition {
    /// `catalog`: the product list with search, category, sort, paging and selection.
    public static func catalog(services: ShopServices, clock: any Clock<Duration>) -> ViewModelDefinition {
        struct Search: Decodable { var query: String }
        struct Category: Decodable { var category: String? }
        struct Sort: Decodable { var sort: ProductSort }
        struct Product: Decodable { var productId: String }
        return .screen(
            "catalog", summary: "The product list: search, category, sort, paging and a selection mode.",
            stateSchemaName: "CatalogState",
            actions: [
                .action("refresh", summary: "Reloads the first page (the retry after a failed load); superseded: true if replaced.",
                        on: CatalogViewModel.self) { model in
                    try await model.refresh().resultMembers()
                },
                .action(
                    "search", summary: "Sets the query at once (phase loading) and searches after 300 ms of quiet; superseded: true if replaced.",
                    params: [param("query", ["type": "string"])], on: CatalogViewModel.self, arguments: Search.self
                ) { model, arguments in
                    try await model.search(arguments.query).resultMembers()
                },
                .action(
                    "setCategory", summary: "Shows one category (null: all); superseded: true if replaced.",
                    params: [param("category", ["type": ["string", "null"]], required: false)],
                    on: CatalogViewModel.self, arguments: Category.self
                ) { model, arguments in
                    try await model.setCategory(arguments.category).resultMembers()
                },
                .action(
                    "setSort", summary: "Sorts by name, price or newest; superseded: true if replaced.",
                    params: [param("sort", ["type": "string", "enum": .array(ProductSort.wireNames.map { .string($0) })])],
                    on: CatalogViewModel.self, arguments: Sort.self
                ) { model, arguments in
                    try await model.setSort(arguments.sort).resultMembers()
                },
                .action("loadMore", summary: "Appends the next page; a failure shows in loadMorePhase and calling again retries; superseded: true if a new list replaced it.",
                        on: CatalogViewModel.self) { model in
                    try await model.loadMore().resultMembers()
                },
                .action(
                    "toggleSelection", summary: "Selects or deselects a listed (loaded) product; another is refused notListed.",
                    params: [param("productId", ["type": "string"])], on: CatalogViewModel.self, arguments: Product.self
                ) { model, arguments in
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
                .action("deleteSelected", summary: "Deletes the selected products and reloads.", on: CatalogViewModel.self) { model in
                    try await model.deleteSelected()
                    return [:]
                },
            ],
            make: { _ in CatalogViewModel(services: services, clock: clock) })
    }
}
