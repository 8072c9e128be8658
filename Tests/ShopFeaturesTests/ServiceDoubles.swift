import Foundation
import Shop

/// A catalog whose every method is an ``Endpoint``.
final class CatalogServiceDouble: CatalogService {
    let page = Endpoint<ProductQuery, ProductPage>("catalog.page")
    let product = Endpoint<String, Product>("catalog.product")
    let categories = Endpoint<Void, [CategorySummary]>("catalog.categories")
    let featured = Endpoint<Int, [Product]>("catalog.featured")
    let create = Endpoint<NewProduct, Product>("catalog.create")
    let delete = Endpoint<[String], Void>("catalog.delete")
    let update = Endpoint<ProductChange, Product>("catalog.update")
    let priceHistory = Endpoint<String, [PricePoint]>("catalog.priceHistory")

    struct ProductChange: Equatable, Sendable {
        var id: String
        var update: ProductUpdate
    }

    func page(_ query: ProductQuery) async throws -> ProductPage { try await self.page.callAsFunction(query) }
    func product(id: String) async throws -> Product { try await self.product.callAsFunction(id) }
    func categories() async throws -> [CategorySummary] { try await self.categories.callAsFunction(()) }
    func featured(limit: Int) async throws -> [Product] { try await self.featured.callAsFunction(limit) }
    func create(_ product: NewProduct) async throws -> Product { try await self.create.callAsFunction(product) }
    func delete(ids: [String]) async throws { try await self.delete.callAsFunction(ids) }
    func update(id: String, _ update: ProductUpdate) async throws -> Product {
        try await self.update.callAsFunction(ProductChange(id: id, update: update))
    }
    func priceHistory(productId: String, limit: Int) async throws -> [PricePoint] {
        try await self.priceHistory.callAsFunction(productId)
    }
}

final class FavoritesServiceDouble: FavoritesService {
    struct Change: Equatable, Sendable {
        var productId: String
        var isFavorite: Bool
    }

    let isFavorite = Endpoint<String, Bool>("favorites.isFavorite")
    let setFavorite = Endpoint<Change, Void>("favorites.setFavorite")

    func isFavorite(productId: String, for shopper: Shopper) async throws -> Bool { try await self.isFavorite.callAsFunction(productId) }
    func setFavorite(productId: String, isFavorite: Bool, for shopper: Shopper) async throws {
        try await self.setFavorite.callAsFunction(Change(productId: productId, isFavorite: isFavorite))
    }
}

final class CartServiceDouble: CartService {
    struct Line: Equatable, Sendable {
        var productId: String
        var quantity: Int
    }

    let cart = Endpoint<Void, Cart>("cart.cart")
    let add = Endpoint<Line, Cart>("cart.add")
    let setQuantity = Endpoint<Line, Cart>("cart.setQuantity")
    let remove = Endpoint<String, Cart>("cart.remove")
    let clear = Endpoint<Void, Cart>("cart.clear")

    func cart(of shopper: Shopper) async throws -> Cart { try await self.cart.callAsFunction(()) }
    func add(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart { try await self.add.callAsFunction(Line(productId: productId, quantity: quantity)) }
    func setQuantity(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        try await self.setQuantity.callAsFunction(Line(productId: productId, quantity: quantity))
    }
    func remove(productId: String, for shopper: Shopper) async throws -> Cart { try await self.remove.callAsFunction(productId) }
    func clear(for shopper: Shopper) async throws -> Cart { try await self.clear.callAsFunction(()) }
}

final class OrderServiceDouble: OrderService {
    let recentOrders = Endpoint<Int, [Order]>("orders.recentOrders")
    let placeOrder = Endpoint<Int64?, Order>("orders.placeOrder")
    func recentOrders(limit: Int, of shopper: Shopper) async throws -> [Order] { try await self.recentOrders.callAsFunction(limit) }
    func placeOrder(expectedRevision: Int64?, for shopper: Shopper) async throws -> Order { try await self.placeOrder.callAsFunction(expectedRevision) }
}

final class RecommendationServiceDouble: RecommendationService {
    let recommendations = Endpoint<Int, [Product]>("recommendations.recommendations")
    func recommendations(limit: Int, for shopper: Shopper) async throws -> [Product] { try await self.recommendations.callAsFunction(limit) }
}

final class AccountServiceDouble: AccountService {
    struct Credentials: Equatable, Sendable {
        var email: String
        var password: String
    }

    struct Adoption: Equatable, Sendable {
        var guestId: String
        var accountId: Int64
    }

    struct Update: Equatable, Sendable {
        var accountId: Int64
        var update: ProfileUpdate
    }

    let register = Endpoint<Credentials, AccountSession>("accounts.register")
    let signIn = Endpoint<Credentials, AccountSession>("accounts.signIn")
    let resume = Endpoint<String, AccountSession>("accounts.resume")
    let signOut = Endpoint<String, Void>("accounts.signOut")
    let account = Endpoint<Int64, Account>("accounts.account")
    let updateProfile = Endpoint<Update, Account>("accounts.updateProfile")
    let adoptGuest = Endpoint<Adoption, GuestAdoption>("accounts.adoptGuest")
    let activeAccount = Endpoint<String, Account?>("accounts.activeAccount")

    func register(email: String, password: String) async throws -> AccountSession {
        try await self.register.callAsFunction(Credentials(email: email, password: password))
    }
    func signIn(email: String, password: String) async throws -> AccountSession {
        try await self.signIn.callAsFunction(Credentials(email: email, password: password))
    }
    func resume(token: String) async throws -> AccountSession { try await self.resume.callAsFunction(token) }
    func signOut(sessionId: String) async throws { try await self.signOut.callAsFunction(sessionId) }
    func account(id: Int64) async throws -> Account { try await self.account.callAsFunction(id) }
    func updateProfile(accountId: Int64, _ update: ProfileUpdate) async throws -> Account {
        try await self.updateProfile.callAsFunction(Update(accountId: accountId, update: update))
    }
    func adoptGuest(_ guestId: String, into accountId: Int64) async throws -> GuestAdoption {
        try await self.adoptGuest.callAsFunction(Adoption(guestId: guestId, accountId: accountId))
    }
    func activeAccount(sessionId: String) async throws -> Account? { try await self.activeAccount.callAsFunction(sessionId) }
}

/// An inbox whose calls are ``Endpoint``s; its changes are the inbox events published on `events`, as
/// the live service's are.
final class NotificationServiceDouble: NotificationService {
    struct PageRequest: Equatable, Sendable {
        var shopper: Shopper
        var before: String?
        var limit: Int
    }

    let events: ShopEvents
    let inbox = Endpoint<PageRequest, InboxPage>("notifications.inbox")
    let markRead = Endpoint<[String], Int>("notifications.markRead")
    let markAllRead = Endpoint<Shopper, Void>("notifications.markAllRead")

    init(events: ShopEvents) {
        self.events = events
    }

    func inbox(of shopper: Shopper, before: String?, limit: Int) async throws -> InboxPage {
        try await self.inbox.callAsFunction(PageRequest(shopper: shopper, before: before, limit: limit))
    }
    func markRead(ids: [String], of shopper: Shopper) async throws -> Int { try await self.markRead.callAsFunction(ids) }
    func markAllRead(of shopper: Shopper) async throws { try await self.markAllRead.callAsFunction(shopper) }
    @MainActor func changes(of shopper: Shopper) -> AsyncStream<InboxChange> { events.inboxChanges(of: shopper) }
}

// MARK: Fixtures

enum Fixture {
    static let date = Date(timeIntervalSince1970: 1_748_736_000)  // 2025-06-01T00:00:00Z

    static func product(
        _ number: Int, price: Int64 = 1_000, stock: Int = 10, maxPerOrder: Int = 5, category: String = "books",
        featured: Bool = false
    ) -> Product {
        Product(
            id: String(format: "p-%04d", number), name: "Product \(number)", description: "Description \(number)",
            price: Money(minorUnits: price), categoryId: category, stock: stock, maxPerOrder: maxPerOrder,
            createdAt: date.addingTimeInterval(Double(number) * 3_600), isFeatured: featured)
    }

    static let books = CategorySummary(category: Category(id: "books", name: "Books"), productCount: 2)
    static let garden = CategorySummary(category: Category(id: "garden", name: "Garden"), productCount: 1)

    static func line(_ product: Product, quantity: Int) -> CartLine {
        CartLine(productId: product.id, name: product.name, categoryId: product.categoryId,
                 unitPrice: product.price, quantity: quantity)
    }

    static func order(_ number: Int, lines: [CartLine]) -> Order {
        let subtotal = lines.map(\.lineTotal).sum()
        let tax = subtotal.applying(basisPoints: 1_000)
        return Order(
            id: String(format: "o-%06d", number), createdAt: date,
            lines: lines.map { OrderLine(productId: $0.productId, name: $0.name, unitPrice: $0.unitPrice, quantity: $0.quantity) },
            subtotal: subtotal, tax: tax, total: subtotal + tax)
    }

    static let unavailable = ShopError.serviceUnavailable("catalog")
}

/// Records every event (recording is never set up: it cannot fail); `trending` is an ``Endpoint``.
final class AnalyticsServiceDouble: AnalyticsService {
    struct Query: Equatable, Sendable {
        var since: Date
        var limit: Int
    }

    let trending = Endpoint<Query, [TrendingProduct]>("analytics.trending")
    private let recorded = Locked<[AnalyticsEvent]>([])

    /// The events recorded so far, in order.
    var events: [AnalyticsEvent] { recorded.withLock { $0 } }

    func record(_ event: AnalyticsEvent) { recorded.withLock { $0.append(event) } }
    func trending(since: Date, limit: Int) async throws -> [TrendingProduct] {
        try await self.trending.callAsFunction(Query(since: since, limit: limit))
    }
    func flush() async {}
}

extension Fixture {
    /// Notification `n-<number>`, unread unless said, about product `p-<number>`.
    static func notification(_ number: Int64, kind: InboxNotification.Kind = .priceDropped, isRead: Bool = false) -> InboxNotification {
        InboxNotification(
            id: "n-\(number)", kind: kind, title: "Price lowered", body: "Product \(number) now costs 9.00 (was 10.00).",
            productId: kind == .orderPlaced ? nil : String(format: "p-%04d", number), orderId: kind == .orderPlaced ? "o-000001" : nil,
            createdAt: date.addingTimeInterval(Double(number)), isRead: isRead)
    }
}
