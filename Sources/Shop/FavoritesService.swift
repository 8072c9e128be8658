/// Remembers which products each shopper marked as favourite.
///
/// Live implementations publish ``ShopEvent/favoriteChanged(productId:isFavorite:shopper:)`` after a change commits.
/// A change made for a signed-in session (``WritingSession``) that was signed out or expired in the store throws
/// ``ShopError/sessionEnded`` and changes nothing.
public protocol FavoritesService: Sendable {
    /// Whether a product is a favourite.
    func isFavorite(productId: String, for shopper: Shopper) async throws -> Bool

    /// Marks or unmarks a product as favourite. Setting the value it already has changes nothing.
    /// - Throws: ``ShopError`` `productNotFound` when marking a product that does not exist.
    func setFavorite(productId: String, isFavorite: Bool, for shopper: Shopper) async throws
}
