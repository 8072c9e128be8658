/// A product with how often it was viewed and added to a cart over a period.
public struct TrendingProduct: Equatable, Hashable, Sendable {
    /// The product, as the catalog has it now.
    public var product: Product
    /// How many times its page loaded it (``AnalyticsEvent/Kind/productViewed`` events).
    public var views: Int
    /// How many adds to a cart stored it (``AnalyticsEvent/Kind/addedToCart`` events; not units).
    public var cartAdds: Int

    /// Creates a trending product.
    public init(product: Product, views: Int, cartAdds: Int) {
        self.product = product
        self.views = views
        self.cartAdds = cartAdds
    }

    /// How trending ranks products: a view counts 1 and an add to a cart 3 (an add says more about
    /// interest than a look, and views outnumber adds several times over).
    public var score: Int { views + 3 * cartAdds }
}
