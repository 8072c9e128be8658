import JSON
import Shop

// A product page's state changes with every change of its product's line in the cart (the units in the cart,
// and what can still be added): it builds its JSON form itself instead of through Codable (see
// `JSONValueConvertible`), the form its `Encodable` conformance gives (`StateFormTests` compares them on random
// states). A member added to one of these types must be added here too; those tests then fail until it is.

extension ProductDetailState: JSONValueConvertible {
    /// The state's JSON form (it has no arrays: nothing to reuse).
    public func jsonValue(reusing memo: EncodingMemo?) -> JSONValue {
        .object([
            "phase": .string(phase.rawValue),
            "error": .orNull(error) { $0.jsonValue },
            "product": .orNull(product) { $0.jsonValue },
            "isFavorite": .orNull(isFavorite) { .bool($0) },
            "canToggleFavorite": .bool(canToggleFavorite),
            "inCart": .orNull(inCart) { .integer(Int64($0)) },
            "quantity": .integer(Int64(quantity)),
            "maxQuantity": .integer(Int64(maxQuantity)),
            "totalPrice": .orNull(totalPrice) { $0.jsonValue },
            "canAddToCart": .bool(canAddToCart),
            "isOutOfStock": .bool(isOutOfStock),
            "isAddingToCart": .bool(isAddingToCart),
            "didAddToCart": .bool(didAddToCart),
        ])
    }
}

extension ProductInfo {
    /// The product's JSON form.
    var jsonValue: JSONValue {
        [
            "id": .string(id), "name": .string(name), "description": .string(description), "price": price.jsonValue,
            "category": .string(category), "stock": .integer(Int64(stock)), "maxPerOrder": .integer(Int64(maxPerOrder)),
            "inStock": .bool(inStock), "isFeatured": .bool(isFeatured), "createdAt": .string(createdAt.iso8601),
        ]
    }
}
