/// How a product list is ordered. Raw values are the wire names.
public enum ProductSort: String, Codable, CaseIterable, Sendable {
    /// By name, A to Z (case-insensitive), then by id.
    case name
    /// By price, lowest first, then by id.
    case price
    /// Newest first, then by id.
    case newest
}
