import Foundation
import Shop

/// Counts the service calls under way, so that the harness can tell when nothing is left to happen.
///
/// The live services do their work on the store's queue and on the cooperative pool, where the main
/// queue cannot see it. Every call from a ViewModel goes through one of the decorators below, which run
/// on the main actor: the count goes up before the call leaves the main actor and down after it is back,
/// in the same job that then resumes the ViewModel. So when the count is zero and the main queue is
/// empty, no task can still make progress.
@MainActor
final class ServiceCallCounter {
    /// Calls started and not yet returned.
    private(set) var outstanding = 0

    /// Runs `call`, counting it while it is under way.
    func count<Result: Sendable>(_ call: () async throws -> Result) async throws -> Result {
        outstanding += 1
        defer { outstanding -= 1 }
        return try await call()
    }
}

extension ShopServices {
    /// These services, each call counted by `counter`.
    @MainActor
    func counted(by counter: ServiceCallCounter) -> ShopServices {
        ShopServices(
            catalog: CountedCatalogService(base: catalog, counter: counter),
            favorites: CountedFavoritesService(base: favorites, counter: counter),
            cart: CountedCartService(base: cart, counter: counter),
            orders: CountedOrderService(base: orders, counter: counter),
            recommendations: CountedRecommendationService(base: recommendations, counter: counter),
            accounts: CountedAccountService(base: accounts, counter: counter),
            idempotency: idempotency,
            events: events,
            notifications: CountedNotificationService(base: notifications, counter: counter),
            analytics: CountedAnalyticsService(base: analytics, counter: counter))
    }
}

// Seven decorators of the same few lines, side by side as in ShopStore's FaultInjectingServices.swift.

struct CountedCatalogService: CatalogService {
    let base: any CatalogService
    let counter: ServiceCallCounter

    @MainActor func page(_ query: ProductQuery) async throws -> ProductPage {
        try await counter.count { try await base.page(query) }
    }
    @MainActor func product(id: String) async throws -> Product {
        try await counter.count { try await base.product(id: id) }
    }
    @MainActor func categories() async throws -> [CategorySummary] {
        try await counter.count { try await base.categories() }
    }
    @MainActor func featured(limit: Int) async throws -> [Product] {
        try await counter.count { try await base.featured(limit: limit) }
    }
    @MainActor func create(_ product: NewProduct) async throws -> Product {
        try await counter.count { try await base.create(product) }
    }
    @MainActor func delete(ids: [String]) async throws {
        try await counter.count { try await base.delete(ids: ids) }
    }
    @MainActor func update(id: String, _ update: ProductUpdate) async throws -> Product {
        try await counter.count { try await base.update(id: id, update) }
    }
    @MainActor func priceHistory(productId: String, limit: Int) async throws -> [PricePoint] {
        try await counter.count { try await base.priceHistory(productId: productId, limit: limit) }
    }
}

struct CountedFavoritesService: FavoritesService {
    let base: any FavoritesService
    let counter: ServiceCallCounter

    @MainActor func isFavorite(productId: String, for shopper: Shopper) async throws -> Bool {
        try await counter.count { try await base.isFavorite(productId: productId, for: shopper) }
    }
    @MainActor func setFavorite(productId: String, isFavorite: Bool, for shopper: Shopper) async throws {
        try await counter.count { try await base.setFavorite(productId: productId, isFavorite: isFavorite, for: shopper) }
    }
}

struct CountedCartService: CartService {
    let base: any CartService
    let counter: ServiceCallCounter

    @MainActor func cart(of shopper: Shopper) async throws -> Cart {
        try await counter.count { try await base.cart(of: shopper) }
    }
    @MainActor func add(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        try await counter.count { try await base.add(productId: productId, quantity: quantity, for: shopper) }
    }
    @MainActor func setQuantity(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        try await counter.count { try await base.setQuantity(productId: productId, quantity: quantity, for: shopper) }
    }
    @MainActor func remove(productId: String, for shopper: Shopper) async throws -> Cart {
        try await counter.count { try await base.remove(productId: productId, for: shopper) }
    }
    @MainActor func clear(for shopper: Shopper) async throws -> Cart {
        try await counter.count { try await base.clear(for: shopper) }
    }
}

struct CountedOrderService: OrderService {
    let base: any OrderService
    let counter: ServiceCallCounter

    @MainActor func recentOrders(limit: Int, of shopper: Shopper) async throws -> [Order] {
        try await counter.count { try await base.recentOrders(limit: limit, of: shopper) }
    }
    @MainActor func placeOrder(expectedRevision: Int64?, for shopper: Shopper) async throws -> Order {
        try await counter.count { try await base.placeOrder(expectedRevision: expectedRevision, for: shopper) }
    }
}

struct CountedRecommendationService: RecommendationService {
    let base: any RecommendationService
    let counter: ServiceCallCounter

    @MainActor func recommendations(limit: Int, for shopper: Shopper) async throws -> [Product] {
        try await counter.count { try await base.recommendations(limit: limit, for: shopper) }
    }
}

struct CountedAccountService: AccountService {
    let base: any AccountService
    let counter: ServiceCallCounter

    @MainActor func register(email: String, password: String) async throws -> AccountSession {
        try await counter.count { try await base.register(email: email, password: password) }
    }
    @MainActor func signIn(email: String, password: String) async throws -> AccountSession {
        try await counter.count { try await base.signIn(email: email, password: password) }
    }
    @MainActor func resume(token: String) async throws -> AccountSession {
        try await counter.count { try await base.resume(token: token) }
    }
    @MainActor func signOut(sessionId: String) async throws {
        try await counter.count { try await base.signOut(sessionId: sessionId) }
    }
    @MainActor func account(id: Int64) async throws -> Account {
        try await counter.count { try await base.account(id: id) }
    }
    @MainActor func updateProfile(accountId: Int64, _ update: ProfileUpdate) async throws -> Account {
        try await counter.count { try await base.updateProfile(accountId: accountId, update) }
    }
    @MainActor func adoptGuest(_ guestId: String, into accountId: Int64) async throws -> GuestAdoption {
        try await counter.count { try await base.adoptGuest(guestId, into: accountId) }
    }
    @MainActor func activeAccount(sessionId: String) async throws -> Account? {
        try await counter.count { try await base.activeAccount(sessionId: sessionId) }
    }
}

/// Counts `trending` and `flush`. `record` returns at once, but the live recorder then writes the event
/// on its own task, off the main queue: each record is followed by a counted flush, so that the harness
/// waits for that write (and the store is released only after it).
struct CountedAnalyticsService: AnalyticsService {
    let base: any AnalyticsService
    let counter: ServiceCallCounter

    func record(_ event: AnalyticsEvent) {
        base.record(event)
        Task { @MainActor [base, counter] in
            _ = try? await counter.count { await base.flush() }
        }
    }
    @MainActor func trending(since: Date, limit: Int) async throws -> [TrendingProduct] {
        try await counter.count { try await base.trending(since: since, limit: limit) }
    }
    @MainActor func flush() async {
        _ = try? await counter.count { await base.flush() }
    }
}

struct CountedNotificationService: NotificationService {
    let base: any NotificationService
    let counter: ServiceCallCounter

    @MainActor func inbox(of shopper: Shopper, before: String?, limit: Int) async throws -> InboxPage {
        try await counter.count { try await base.inbox(of: shopper, before: before, limit: limit) }
    }
    @MainActor func markRead(ids: [String], of shopper: Shopper) async throws -> Int {
        try await counter.count { try await base.markRead(ids: ids, of: shopper) }
    }
    @MainActor func markAllRead(of shopper: Shopper) async throws {
        try await counter.count { try await base.markAllRead(of: shopper) }
    }
    @MainActor func changes(of shopper: Shopper) -> AsyncStream<InboxChange> {
        base.changes(of: shopper)
    }
}

/// Guest ids for the sessions of one fuzz run: `fuzz-1`, `fuzz-2`, ...
final class GuestNumbering: Sendable {
    private let count = Locked(0)

    func next() -> String {
        "fuzz-\(count.withLock { $0 += 1; return $0 })"
    }
}
