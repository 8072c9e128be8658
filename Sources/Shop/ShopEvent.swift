/// A committed change, published on the ``ShopEvents`` feed.
///
/// Changes of one shopper's data name the shopper: a ViewModel shows only its session's.
public enum ShopEvent: Equatable, Sendable {
    /// A shopper's cart changed; the value is the cart after the change.
    case cartChanged(Cart, shopper: Shopper)
    /// A shopper placed an order (published after the ``cartChanged(_:shopper:)`` that emptied the cart).
    case orderPlaced(Order, shopper: Shopper)
    /// A product was added to the catalog.
    case productCreated(Product)
    /// Products were removed from the catalog.
    case productsDeleted([String])
    /// A shopper marked or unmarked a product as favourite.
    case favoriteChanged(productId: String, isFavorite: Bool, shopper: Shopper)
    /// Several parts of a shopper's data changed at once (a guest's cart and favourites moved to the
    /// account it signed in to): whatever shows that shopper's data is to be loaded again.
    case shopperDataChanged(Shopper)
    /// An account's profile changed.
    case accountChanged(Account)
    /// A session was signed out (in this or another server): servers holding it become guests.
    case sessionEnded(sessionId: String)
    /// This server's session now shops as another shopper (signed in, signed out, or its sign-in ended):
    /// everything that shows a shopper's data is to be loaded again for the new one.
    case sessionChanged(Shopper)
    /// Changes were missed (the change log was pruned past this server's position, or the catalog was
    /// replaced): everything shown may be stale and is to be loaded again.
    case resync
    /// An existing product's price, stock or text changed; the value is the product after the change.
    case productChanged(Product)
    /// A product moved from one category to another (published after its ``productChanged(_:)``): the
    /// counts per category changed, and a list of `to` may now hold it.
    case productMoved(productId: String, from: String, to: String)
    /// A product came back in stock: its stock went from 0 to more (published after its
    /// ``productChanged(_:)``, which does not say what the stock was). A list of products in stock may now
    /// hold it.
    case productRestocked(productId: String)
    /// A notification arrived in an account's inbox; `replacing` is the unread one of the same kind and
    /// product it replaced (removed), and `unreadCount` the inbox's unread count after it.
    case notificationArrived(InboxNotification, replacing: String?, unreadCount: Int, shopper: Shopper)
    /// Notifications of an account were marked read: those in `ids` (that were unread), or all when nil;
    /// `unreadCount` is the inbox's unread count after it.
    case notificationsRead(ids: [String]?, unreadCount: Int, shopper: Shopper)

    /// Whether the set of products or their counts per category changed.
    public var changesCatalog: Bool {
        switch self {
        case .productCreated, .productsDeleted, .productMoved, .resync: true
        default: false
        }
    }
}
