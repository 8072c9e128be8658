/// Every shop service and the change feed, built by one composition root and handed to the ViewModels.
public struct ShopServices: Sendable {
    /// The product catalog.
    public var catalog: any CatalogService
    /// Favourite marks.
    public var favorites: any FavoritesService
    /// The cart and checkout.
    public var cart: any CartService
    /// Placing orders, and the orders placed.
    public var orders: any OrderService
    /// Suggestions.
    public var recommendations: any RecommendationService
    /// Accounts, sign-in and sessions.
    public var accounts: any AccountService
    /// Idempotency keys recorded with stored changes.
    public var idempotency: any IdempotencyService
    /// The change feed the services publish to.
    public var events: ShopEvents
    /// Each account's inbox.
    public var notifications: any NotificationService
    /// Analytics: what shoppers do, and what is trending.
    public var analytics: any AnalyticsService

    /// Creates the container.
    public init(
        catalog: any CatalogService, favorites: any FavoritesService, cart: any CartService,
        orders: any OrderService, recommendations: any RecommendationService,
        accounts: any AccountService, idempotency: any IdempotencyService, events: ShopEvents,
        notifications: any NotificationService,
        analytics: any AnalyticsService
    ) {
        self.catalog = catalog
        self.favorites = favorites
        self.cart = cart
        self.orders = orders
        self.recommendations = recommendations
        self.accounts = accounts
        self.idempotency = idempotency
        self.events = events
        self.notifications = notifications
        self.analytics = analytics
    }
}
