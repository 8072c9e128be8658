import JSON
import JSONPatch
import Shop

// A product page's state finds its own patch by comparing the typed states (see `JSONPatchDiffable`): the
// operations `JSONPatch.diff` makes from the two JSON forms (`ProductDetailStatePatchTests` compares them on
// random pairs). An error replacing another is left to that diff.

extension ProductDetailState: JSONPatchDiffable {
    /// The patch from `old`'s JSON form to this state's, or nil to leave it to `JSONPatch.diff`.
    public func patch(from old: ProductDetailState) -> JSONPatch? {
        // The members in key order, as the diff visits them.
        var edits = ObjectEdits(at: .root, memberCount: 13)
        if canAddToCart != old.canAddToCart { edits.replace("canAddToCart", with: .bool(canAddToCart)) }
        if canToggleFavorite != old.canToggleFavorite { edits.replace("canToggleFavorite", with: .bool(canToggleFavorite)) }
        if didAddToCart != old.didAddToCart { edits.replace("didAddToCart", with: .bool(didAddToCart)) }
        if error != old.error {
            guard error == nil || old.error == nil else { return nil }
            edits.replace("error", with: .orNull(error) { $0.jsonValue })
        }
        if inCart != old.inCart { edits.replace("inCart", with: .orNull(inCart) { .integer(Int64($0)) }) }
        if isAddingToCart != old.isAddingToCart { edits.replace("isAddingToCart", with: .bool(isAddingToCart)) }
        if isFavorite != old.isFavorite { edits.replace("isFavorite", with: .orNull(isFavorite) { .bool($0) }) }
        if isOutOfStock != old.isOutOfStock { edits.replace("isOutOfStock", with: .bool(isOutOfStock)) }
        if maxQuantity != old.maxQuantity { edits.replace("maxQuantity", with: .integer(Int64(maxQuantity))) }
        if phase != old.phase { edits.replace("phase", with: .string(phase.rawValue)) }
        if product != old.product {
            if let product, let oldProduct = old.product {
                edits.nested(product.edits(from: oldProduct))
            } else {
                edits.replace("product", with: .orNull(product) { $0.jsonValue })
            }
        }
        if quantity != old.quantity { edits.replace("quantity", with: .integer(Int64(quantity))) }
        if totalPrice != old.totalPrice { edits.replace("totalPrice", with: .orNull(totalPrice) { $0.jsonValue }) }
        // The diff replaces the whole state then: left to it, which builds the whole form anyway.
        guard !edits.replacesWhole else { return nil }
        return JSONPatch(edits.operations)
    }
}

extension ProductInfo {
    /// The operations from `old`'s form to this product's, at `/product`.
    func edits(from old: ProductInfo) -> [JSONPatchOperation] {
        let path = JSONPointer(tokens: ["product"])
        // In key order.
        let changed = [
            category != old.category, createdAt != old.createdAt, description != old.description, id != old.id,
            inStock != old.inStock, isFeatured != old.isFeatured, maxPerOrder != old.maxPerOrder, name != old.name,
            price != old.price, stock != old.stock,
        ]
        // Counted first: a product replaced whole builds no member values.
        guard !JSONPatch.replacesWhole(changed: changed.count(where: { $0 }), of: changed.count) else {
            return [.replace(path: path, value: jsonValue)]
        }
        var edits = ObjectEdits(at: path, memberCount: changed.count)
        if changed[0] { edits.replace("category", with: .string(category)) }
        if changed[1] { edits.replace("createdAt", with: .string(createdAt.iso8601)) }
        if changed[2] { edits.replace("description", with: .string(description)) }
        if changed[3] { edits.replace("id", with: .string(id)) }
        if changed[4] { edits.replace("inStock", with: .bool(inStock)) }
        if changed[5] { edits.replace("isFeatured", with: .bool(isFeatured)) }
        if changed[6] { edits.replace("maxPerOrder", with: .integer(Int64(maxPerOrder))) }
        if changed[7] { edits.replace("name", with: .string(name)) }
        if changed[8] { edits.replace("price", with: price.jsonValue) }
        if changed[9] { edits.replace("stock", with: .integer(Int64(stock))) }
        return edits.operations
    }
}
