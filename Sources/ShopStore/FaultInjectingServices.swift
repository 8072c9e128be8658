import Foundation
import Shop

// Decorators that put a FaultInjector in front of each service. One file: they are seven copies of the
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
    func update(id: String, _ update: ProductUpdate) async throws -> Product {
        try await injector.perform(.catalog) { try await base.update(id: id, update) }
    }
    func priceHistory(productId: String, limit: Int) async throws -> [PricePoint] {
        try await injector.perform(.catalog) { try await base.priceHistory(productId: productId, limit: limit) }
    }
}

struct FaultInjectingFavoritesService: FavoritesService {
    let base: any FavoritesService
    let injector: FaultInjector

    func isFavorite(productId: String, for shopper: Shopper) async throws -> Bool {
        try await injector.perform(.favorites) { try await base.isFavorite(productId: productId, for: shopper) }
    }
    func setFavorite(productId: String, isFavorite: Bool, for shopper: Shopper) async throws {
        try await injector.perform(.favorites) { try await base.setFavorite(productId: productId, isFavorite: isFavorite, for: shopper) }
    }
}

struct FaultInjectingCartService: CartService {
    let base: any CartService
    let injector: FaultInjector

    func cart(of shopper: Shopper) async throws -> Cart {
        try await injector.perform(.cart) { try await base.cart(of: shopper) }
    }
    func add(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        try await injector.perform(.cart) { try await base.add(productId: productId, quantity: quantity, for: shopper) }
    }
    func setQuantity(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        try await injector.perform(.cart) { try await base.setQuantity(productId: productId, quantity: quantity, for: shopper) }
    }
    func remove(productId: String, for shopper: Shopper) async throws -> Cart {
        try await injector.perform(.cart) { try await base.remove(productId: productId, for: shopper) }
    }
    func clear(for shopper: Shopper) async throws -> Cart {
        try await injector.perform(.cart) { try await base.clear(for: shopper) }
    }
}

struct FaultInjectingOrderService: OrderService {
    let base: any OrderService
    let injector: FaultInjector

    func recentOrders(limit: Int, of shopper: Shopper) async throws -> [Order] {
        try await injector.perform(.orders) { try await base.recentOrders(limit: limit, of: shopper) }
    }
    func placeOrder(expectedRevision: Int64?, for shopper: Shopper) async throws -> Order {
        try await injector.perform(.orders) { try await base.placeOrder(expectedRevision: expectedRevision, for: shopper) }
    }
}

struct FaultInjectingRecommendationService: RecommendationService {
    let base: any RecommendationService
    let injector: FaultInjector

    func recommendations(limit: Int, for shopper: Shopper) async throws -> [Product] {
        try await injector.perform(.recommendations) { try await base.recommendations(limit: limit, for: shopper) }
    }
}

struct FaultInjectingAccountService: AccountService {
    let base: any AccountService
    let injector: FaultInjector

    func register(email: String, password: String) async throws -> AccountSession {
        try await injector.perform(.accounts) { try await base.register(email: email, password: password) }
    }
    func signIn(email: String, password: String) async throws -> AccountSession {
        try await injector.perform(.accounts) { try await base.signIn(email: email, password: password) }
    }
    func resume(token: String) async throws -> AccountSession {
        try await injector.perform(.accounts) { try await base.resume(token: token) }
    }
    func signOut(sessionId: String) async throws {
        try await injector.perform(.accounts) { try await base.signOut(sessionId: sessionId) }
    }
    func account(id: Int64) async throws -> Account {
        try await injector.perform(.accounts) { try await base.account(id: id) }
    }
    func updateProfile(accountId: Int64, _ update: ProfileUpdate) async throws -> Account {
        try await injector.perform(.accounts) { try await base.updateProfile(accountId: accountId, update) }
    }
    func adoptGuest(_ guestId: String, into accountId: Int64) async throws -> GuestAdoption {
        try await injector.perform(.accounts) { try await base.adoptGuest(guestId, into: accountId) }
    }
    func activeAccount(sessionId: String) async throws -> Account? {
        try await injector.perform(.accounts) { try await base.activeAccount(sessionId: sessionId) }
    }
}

/// Faults on `trending` only: recording never fails and never waits (that is the analytics contract), and
/// a flush waits for the base's writes as it is.
struct FaultInjectingAnalyticsService: AnalyticsService {
    let base: any AnalyticsService
    let injector: FaultInjector

    func record(_ event: AnalyticsEvent) {
        base.record(event)
    }
    func trending(since: Date, limit: Int) async throws -> [TrendingProduct] {
        try await injector.perform(.analytics) { try await base.trending(since: since, limit: limit) }
    }
    func flush() async {
        await base.flush()
    }
}

struct FaultInjectingNotificationService: NotificationService {
    let base: any NotificationService
    let injector: FaultInjector

    func inbox(of shopper: Shopper, before: String?, limit: Int) async throws -> InboxPage {
        try await injector.perform(.notifications) { try await base.inbox(of: shopper, before: before, limit: limit) }
    }
    func markRead(ids: [String], of shopper: Shopper) async throws -> Int {
        try await injector.perform(.notifications) { try await base.markRead(ids: ids, of: shopper) }
    }
    func markAllRead(of shopper: Shopper) async throws {
        try await injector.perform(.notifications) { try await base.markAllRead(of: shopper) }
    }
    /// Not faulted: the feed is this server's own, not a service call.
    @MainActor func changes(of shopper: Shopper) -> AsyncStream<InboxChange> {
        base.changes(of: shopper)
    }
}
