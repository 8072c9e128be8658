/// Suggests products to a shopper.
public protocol RecommendationService: Sendable {
    /// Products the customer may like: in-stock products from the categories of their favourites and
    /// past orders that they have neither favourited nor ordered yet, topped up with featured and then
    /// newest products when there are not enough (so a new customer still gets suggestions).
    /// - Parameter limit: The most products to return.
    func recommendations(limit: Int, for shopper: Shopper) async throws -> [Product]
}
