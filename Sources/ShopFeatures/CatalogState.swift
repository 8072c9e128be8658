import Shop

/// Everything a catalog screen shows, as one value.
public struct CatalogState: Codable, Equatable, Sendable {
    /// `loaded` means `products` are the results of `query`, `category` and `sort`; while `loading`
    /// (from the first keystroke of a search, through its 300 ms of quiet, to its results) they are the
    /// previous results.
    public var phase: PhaseName
    /// The load's failure, or else the last failed action's (content stays shown); `null` when none.
    @ExplicitNull public var error: ErrorInfo?
    /// The search text (updated at once, searched after 300 ms of quiet; a search abandoned by its caller
    /// puts back the text of the results shown).
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
    /// Selected product ids, sorted: only listed (loaded) products can be selected.
    public var selection: [String]
    /// Appending the next page: `idle`, `loading` or `failed` (the list stays `loaded`).
    public var loadMorePhase: PagingPhaseName
    /// Why the last page failed to load; `null` otherwise.
    @ExplicitNull public var loadMoreError: ErrorInfo?
}
