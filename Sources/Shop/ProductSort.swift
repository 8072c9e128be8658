/// How a product list is ordered. Raw values are the wire names.
public enum ProductSort: String, Codable, WireEnum {
    /// By name, A to Z (case-insensitive), then by id.
    case name
    /// By price, lowest first, then by id.
    case price
    /// Newest first, then by id.
    case newest

    /// Decodes a wire name; an unknown one is an error listing the allowed values.
    public init(from decoder: any Decoder) throws {
        try self.init(wireFrom: decoder)
    }
}
