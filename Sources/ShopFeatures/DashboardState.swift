import Shop

/// Everything the dashboard shows, as one value: four independently loading sections.
public struct DashboardState: Codable, Equatable, Sendable {
    public var featured: SectionState<ProductSummary>
    public var categories: SectionState<CategoryCount>
    /// The last 3 orders, newest first.
    public var recentOrders: SectionState<OrderSnapshot>
    public var recommended: SectionState<ProductSummary>
}

/// One dashboard section.
public struct SectionState<Item: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    public var phase: PhaseName
    @ExplicitNull public var error: ErrorInfo?
    public var items: [Item]
}

/// The dashboard's sections; raw values are the wire names.
public enum DashboardSection: String, Codable, WireEnum {
    case featured, categories, recentOrders, recommended

    /// Decodes a wire name; an unknown one is an error listing the sections.
    public init(from decoder: any Decoder) throws {
        try self.init(wireFrom: decoder)
    }
}
