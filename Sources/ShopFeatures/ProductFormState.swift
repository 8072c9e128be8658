import Shop

/// Everything the product form shows, as one value.
public struct ProductFormState: Codable, Equatable, Sendable {
    /// The categories load (needed to validate `category`).
    public var phase: PhaseName
    /// The categories load's failure, or else the last submission's operational failure; `null` when none.
    @ExplicitNull public var error: ErrorInfo?
    /// The field values as typed.
    public var fields: ProductFormFields
    /// Messages for the invalid fields the user has edited, by field name (`name`, `description`,
    /// `price`, `category`). Untouched fields show no error until a submission is tried: a refused
    /// `submit()` shows every invalid field here (and lists them in its error's `details`).
    public var errors: [String: String]
    /// Whether every field (touched or not) is valid.
    public var isValid: Bool
    public var submitPhase: SubmitPhaseName
    /// The id of the product the last successful submission created; `null` otherwise.
    @ExplicitNull public var createdProductId: String?
    /// The categories to choose from, by name.
    public var categories: [CategoryOption]
    /// `create` (a new product) or `edit` (the product `productId`).
    public var mode: ProductFormMode = .create
    /// The product edited; `null` in create mode.
    @ExplicitNull public var productId: String?
    /// Whether the fields differ from the stored product (edit mode) or from an empty form (create mode).
    public var hasChanges: Bool = false
}

/// Whether the form creates a product or edits one. Raw values are the wire names.
public enum ProductFormMode: String, Codable, CaseIterable, Sendable {
    /// A new product (opened without args).
    case create
    /// An existing product (opened with `{productId}`).
    case edit
}

/// The form's field values as typed.
public struct ProductFormFields: Codable, Equatable, Sendable {
    /// 3 to 120 characters once trimmed, no control characters.
    public var name = ""
    /// At most 500 characters.
    public var description = ""
    /// A decimal such as `"12.50"`: greater than 0, at most 1000000.00, at most two decimals.
    public var price = ""
    /// A category id.
    public var category = ""
    /// Units in stock: a whole number from 0 to 1000000 (a new product starts with 100).
    public var stock = "100"

    /// Empty fields (stock 100, as a new product gets by default).
    public init() {}

    /// The fields showing a stored product.
    public init(_ product: Product) {
        name = product.name
        description = product.description
        price = product.price.description
        category = product.categoryId
        stock = String(product.stock)
    }

    subscript(field: ProductFormField) -> String {
        get {
            switch field {
            case .name: name
            case .description: description
            case .price: price
            case .category: category
            case .stock: stock
            }
        }
        set {
            switch field {
            case .name: name = newValue
            case .description: description = newValue
            case .price: price = newValue
            case .category: category = newValue
            case .stock: stock = newValue
            }
        }
    }
}

/// The form's fields; raw values are the wire names.
public enum ProductFormField: String, Codable, WireEnum {
    case name, description, price, category, stock

    /// Decodes a wire name; an unknown one is an error listing the fields.
    public init(from decoder: any Decoder) throws {
        try self.init(wireFrom: decoder)
    }
}
