/// A product category.
public struct Category: Codable, Equatable, Hashable, Sendable, Identifiable {
    /// Stable identifier such as `"books"`.
    public var id: String
    /// Display name such as `"Books"`.
    public var name: String

    /// Creates a category.
    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}
