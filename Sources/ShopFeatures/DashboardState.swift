import Shop

/// Everything the dashboard shows, as one value: five independently loading sections.
public struct DashboardState: Codable, Equatable, Sendable {
    public var featured: SectionState<ProductSummary>
    public var categories: SectionState<CategoryCount>
    /// The last 3 orders, newest first.
    public var recentOrders: SectionState<OrderSnapshot>
    public var recommended: SectionState<ProductSummary>
    /// The products most viewed and added to carts over the last 24 hours, most first, at most 5.
    public var trending: SectionState<TrendingItem>
}

/// A trending product, with its views and adds to carts over the last 24 hours.
public struct TrendingItem: Codable, Equatable, Sendable {
    public var product: ProductSummary
    public var views: Int
    public var cartAdds: Int

    init(_ trending: TrendingProduct) {
        product = ProductSummary(trending.product)
        views = trending.views
        cartAdds = trending.cartAdds
    }
}

/// One dashboard section.
public struct SectionState<Item: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    public var phase: PhaseName
    @ExplicitNull public var error: ErrorInfo?
    public var items: [Item]
}

/// The dashboard's sections; raw values are the wire names.
public enum DashboardSection: String, Codable, WireEnum {
    case featured, categories, recentOrders, recommended, trending

    /// Decodes a wire name; an unknown one is an error listing the sections.
    public init(from decoder: any Decoder) throws {
        try self.init(wireFrom: decoder)
    }
}
