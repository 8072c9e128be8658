import Shop

/// The part of a query's matches that one page holds, bounded the same way by every store: at most
/// ``maximumPageSize`` products, from an offset of at least 0.
package struct ProductPageWindow: Equatable, Sendable {
    /// The most products one page may hold.
    package static let maximumPageSize = 200

    /// How many products the page holds at most: the query's limit, within 0 … ``maximumPageSize``.
    package let limit: Int
    /// How many matches come before the page: the query's offset, at least 0.
    package let offset: Int

    /// The window `query` asks for.
    package init(_ query: ProductQuery) {
        limit = min(max(query.limit, 0), Self.maximumPageSize)
        offset = max(query.offset, 0)
    }

    /// Whether this page of a search is found faster by walking the products in page order (along the
    /// sort's index) and keeping matches until the page is full, than by sorting every match.
    /// - Parameters:
    ///   - matches: How many products match.
    ///   - products: How many products there are (or a bound on it).
    package func prefersWalking(matches: Int, products: Int) -> Bool {
        Self.prefersWalking(matches: matches, products: products, wanted: offset + limit)
    }

    /// Whether walking in page order beats listing and sorting the matches, when `wanted` products are
    /// needed: a walk takes about `wanted × products / matches` steps, a listing handles every match (in
    /// both engines both cost a fraction of a µs to a few µs each).
    package static func prefersWalking(matches: Int, products: Int, wanted: Int) -> Bool {
        Double(matches) * Double(matches) > Double(max(wanted, 1)) * Double(products)
    }
}
