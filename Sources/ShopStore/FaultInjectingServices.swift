import Shop

// Decorators that put a FaultInjector in front of each service. One file: they are five copies of the
// same few lines, and reading them side by side is the easiest way to check none was missed.

struct FaultInjectingCatalogService: CatalogService {
    let base: any CatalogService
    let injector: FaultInjector

    func page(_ query: ProductQuery) async throws -> ProductPage {
        try await injector.perform(.catalog) { try await base.page(query) }
    }
    func product(id: String) async throws -> Product {
        try await injector.perform(.catalog) { try await base.product(id: id) }
    }
    func categories() async throws -> [CategorySummary] {
        try await injector.perform(.catalog) { try await base.categories() }
    }
    func featured(limit: Int) async throws -> [Product] {
        try await injector.perform(.catalog) { try await base.featured(limit: limit) }
    }
    func create(_ product: NewProduct) async throws -> Product {
        try await injector.perform(.catalog) { try await base.create(product) }
    }
    func delete(ids: [String]) async throws {
        try await injector.perform(.catalog) { try await base.delete(ids: ids) }
    }
}

struct FaultInjectingFavoritesService: FavoritesService {
    let base: any FavoritesService
    let injector: FaultInjector

    func isFavorite(productId: String) async throws -> Bool {
        try await injector.perform(.favorites) { try await base.isFavorite(productId: productId) }
    }
    func setFavorite(productId: String, isFavorite: Bool) async throws {
        try await injector.perform(.favorites) { try await base.setFavorite(productId: productId, isFavorite: isFavorite) }
    }
}

struct FaultInjectingCartService: CartService {
    let base: any CartService
    let injector: FaultInjector

    func cart() async throws -> Cart {
        try await injector.perform(.cart) { try await base.cart() }
    }
    func add(productId: String, quantity: Int) async throws -> Cart {
        try await injector.perform(.cart) { try await base.add(productId: productId, quantity: quantity) }
    }
    func setQuantity(productId: String, quantity: Int) async throws -> Cart {
        try await injector.perform(.cart) { try await base.setQuantity(productId: productId, quantity: quantity) }
    }
    func remove(productId: String) async throws -> Cart {
        try await injector.perform(.cart) { try await base.remove(productId: productId) }
    }
    func clear() async throws -> Cart {
        try await injector.perform(.cart) { try await base.clear() }
    }
}

struct FaultInjectingOrderService: OrderService {
    let base: any OrderService
    let injector: FaultInjector

    func recentOrders(limit: Int) async throws -> [Order] {
        try await injector.perform(.orders) { try await base.recentOrders(limit: limit) }
    }
    func placeOrder(expectedRevision: Int64?) async throws -> Order {
        try await injector.perform(.orders) { try await base.placeOrder(expectedRevision: expectedRevision) }
    }
}

struct FaultInjectingRecommendationService: RecommendationService {
    let base: any RecommendationService
    let injector: FaultInjector

    func recommendations(limit: Int) async throws -> [Product] {
        try await injector.perform(.recommendations) { try await base.recommendations(limit: limit) }
    }
}
