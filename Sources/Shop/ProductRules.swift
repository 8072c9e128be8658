import Foundation

/// The rules a new product must follow, shared by the product form and the catalog.
///
/// Each check returns a message for people, or `nil` when the value is fine.
public enum ProductRules {
    /// The most characters a description may have.
    public static let maximumDescriptionLength = 500
    /// The fewest characters a name may have once trimmed.
    public static let minimumNameLength = 3
    /// The most characters a name may have once trimmed: it must fit a product card and a cart line.
    public static let maximumNameLength = 120

    /// Checks a name: required, 3 to 120 characters once trimmed, no control characters.
    public static func nameError(_ name: String) -> String? {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return "Name is required." }
        // Unicode scalars, not graphemes: "a" plus 10 000 combining marks is not one character's worth.
        if trimmed.unicodeScalars.count < minimumNameLength { return "Name must be at least \(minimumNameLength) characters." }
        if trimmed.unicodeScalars.count > maximumNameLength { return "Name must be at most \(maximumNameLength) characters." }
        if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "Name must not contain control characters."
        }
        return nil
    }

    /// Checks a description: at most 500 characters; line breaks and tabs allowed, other control characters
    /// not (SQLite would store a description only up to a NUL character, and answer with less than was sent).
    public static func descriptionError(_ description: String) -> String? {
        if description.unicodeScalars.count > maximumDescriptionLength {
            return "Description must be at most \(maximumDescriptionLength) characters."
        }
        if description.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) {
            return "Description must not contain control characters other than line breaks."
        }
        return nil
    }

    /// The highest unit price: it keeps every cart total and its tax (amount times basis points) far
    /// inside 64-bit cents.
    public static let maximumPrice = Money(minorUnits: 100_000_000)

    /// Checks a price: greater than zero, at most ``maximumPrice``.
    public static func priceError(_ price: Money) -> String? {
        if !price.isPositive { return "Price must be greater than zero." }
        return price > maximumPrice ? "Price must be at most \(maximumPrice)." : nil
    }

    /// Checks price text: a positive decimal with at most two decimals, such as `"12.50"`, at most
    /// ``maximumPrice``.
    public static func priceTextError(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return "Price is required." }
        guard let price = Money(decimalString: trimmed) else {
            return "Price must be a number with at most two decimals, such as 12.50."
        }
        return priceError(price)
    }

    /// Every problem of a new product except its category's existence, keyed by field name
    /// (`name`, `description`, `price`, `stock`, `maxPerOrder`).
    public static func errors(for product: NewProduct) -> [String: String] {
        var errors: [String: String] = [:]
        errors["name"] = nameError(product.name)
        errors["description"] = descriptionError(product.description)
        errors["price"] = priceError(product.price)
        if product.stock < 0 { errors["stock"] = "Stock cannot be negative." }
        if product.maxPerOrder < 1 { errors["maxPerOrder"] = "At least 1 per order must be allowed." }
        return errors
    }

    /// The most units a product's stock may be set to.
    public static let maximumStock = 1_000_000

    /// Checks stock text: a whole number from 0 to ``maximumStock`` written in decimal digits.
    public static func stockTextError(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return "Stock is required." }
        guard trimmed.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }), trimmed.count <= 7, let stock = Int(trimmed)
        else { return "Stock must be a whole number from 0 to \(maximumStock)." }
        return stock > maximumStock ? "Stock must be at most \(maximumStock)." : nil
    }

    /// Every problem of a changed product except its category's existence, keyed by field name, as
    /// ``errors(for:)-(NewProduct)`` checks a new one; stock also at most ``maximumStock``.
    public static func errors(for product: Product) -> [String: String] {
        var errors = errors(for: NewProduct(
            name: product.name, description: product.description, price: product.price, categoryId: product.categoryId,
            stock: product.stock, maxPerOrder: product.maxPerOrder, isFeatured: product.isFeatured))
        if product.stock > maximumStock { errors["stock"] = "Stock must be at most \(maximumStock)." }
        return errors
    }
}
