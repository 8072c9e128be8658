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
                .action("refresh", summary: "Reloads the first page.", on: CatalogViewModel.self) { model in
                    await model.refresh()
                    return [:]
                },
                .action(
                    "search", summary: "Sets the query at once and searches after 300 ms of quiet; a superseded search answers superseded: true.",
                    params: [param("query", ["type": "string"])], on: CatalogViewModel.self, arguments: Search.self
                ) { model, arguments in
                    switch await model.search(arguments.query) {
                    case .superseded: return ["superseded": true]
                    case .completed: return [:]
                    case .cancelled: throw CancellationError()
                    }
                },
                .action(
                    "setCategory", summary: "Shows one category (null: all).",
                    params: [param("category", ["type": ["string", "null"]], required: false)],
                    on: CatalogViewModel.self, arguments: Category.self
                ) { model, arguments in
                    try await model.setCategory(arguments.category)
                    return [:]
                },
                .action(
                    "setSort", summary: "Sorts by name, price or newest.",
                    params: [param("sort", ["type": "string", "enum": ["name", "price", "newest"]])],
                    on: CatalogViewModel.self, arguments: Sort.self
                ) { model, arguments in
                    await model.setSort(arguments.sort)
                    return [:]
                },
                .action("loadMore", summary: "Appends the next page.", on: CatalogViewModel.self) { model in
                    await model.loadMore()
                    return [:]
                },
                .action(
                    "toggleSelection", summary: "Selects or deselects a loaded product.",
                    params: [param("productId", ["type": "string"])], on: CatalogViewModel.self, arguments: Product.self
                ) { model, arguments in
                    try model.toggleSelection(arguments.productId)
                    return [:]
                },
                .action("selectAll", summary: "Selects every loaded product.", on: CatalogViewModel.self) { model in
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
