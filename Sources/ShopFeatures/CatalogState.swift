import Shop

/// Everything a catalog screen shows, as one value.
public struct CatalogState: Codable, Equatable, Sendable {
    public var phase: PhaseName
    /// The load's failure, or else the last failed action's (content stays shown); `null` when none.
    @ExplicitNull public var error: ErrorInfo?
    /// The search text as typed (updated at once, searched after 300 ms of quiet).
    public var query: String
    /// The category id filtered on, or `null` for all.
    @ExplicitNull public var category: String?
    public var sort: ProductSort
    /// The loaded products, in the list's order.
    public var products: [ProductSummary]
    /// How many products match, loaded or not.
    public var totalCount: Int
    /// Whether `loadMore()` would load more.
    public var hasMore: Bool
    /// Selected product ids, sorted.
    public var selection: [String]
    public var isLoadingMore: Bool
}

/// How a `search` call ended.
public enum SearchOutcome: String, Codable, Sendable {
    /// The search ran and its results (or its failure) are in the state.
    case completed
    /// A newer search, filter or refresh replaced it; not an error.
    case superseded
    /// The caller's task was cancelled, or the ViewModel closed.
    case cancelled
}
