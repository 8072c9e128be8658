import JSON
import JSONPatch
import Shop

// A price ticker's state finds its own patch by comparing the typed states (see `JSONPatchDiffable`): the
// operations `JSONPatch.diff` makes from the two JSON forms (`PriceTickerStatePatchTests` compares them on random
// pairs). Its history moves along by the points of a change (an `ArrayShift`): the points dropped at its head and
// the ones added at its end, without either whole form built. An error replacing another is left to that diff.

extension PriceTickerState: JSONPatchDiffable {
    /// The patch from `old`'s JSON form to this state's, or nil to leave it to `JSONPatch.diff`.
    public func patch(from old: PriceTickerState) -> JSONPatch? {
        // The members in key order, as the diff visits them.
        var edits = ObjectEdits(at: .root, memberCount: 8)
        if currentPrice != old.currentPrice { edits.replace("currentPrice", with: .orNull(currentPrice) { $0.jsonValue }) }
        if error != old.error {
            guard error == nil || old.error == nil else { return nil }
            edits.replace("error", with: .orNull(error) { $0.jsonValue })
        }
        if isConnected != old.isConnected { edits.replace("isConnected", with: .bool(isConnected)) }
        if name != old.name { edits.replace("name", with: .string(name)) }
        if phase != old.phase { edits.replace("phase", with: .string(phase.rawValue)) }
        if priceHistory != old.priceHistory {
            edits.nested(JSONPatch.arrayEdits(
                from: old.priceHistory, to: priceHistory, at: JSONPointer(tokens: ["priceHistory"]),
                elementEdits: { old, new, path in new.edits(from: old, at: path) },
                form: \.jsonValue, whole: { .array(priceHistory.map(\.jsonValue)) }))
        }
        if productId != old.productId { edits.replace("productId", with: .string(productId)) }
        if stock != old.stock { edits.replace("stock", with: .orNull(stock) { .integer(Int64($0)) }) }
        // The diff replaces the whole state then: left to it, which builds the whole form anyway.
        guard !edits.replacesWhole else { return nil }
        return JSONPatch(edits.operations)
    }
}

extension PricePointSnapshot {
    /// The operations from `old`'s form to this point's, for the point at `path`.
    func edits(from old: PricePointSnapshot, at path: JSONPointer) -> [JSONPatchOperation] {
        // In key order.
        let changedAt = at != old.at, changedPrice = price != old.price, changedStock = stock != old.stock
        // Counted first: a point replaced whole builds no member values.
        guard !JSONPatch.replacesWhole(changed: [changedAt, changedPrice, changedStock].count(where: { $0 }), of: 3) else {
            return [.replace(path: path, value: jsonValue)]
        }
        var edits = ObjectEdits(at: path, memberCount: 3)
        if changedAt { edits.replace("at", with: .string(at.iso8601)) }
        if changedPrice { edits.replace("price", with: price.jsonValue) }
        if changedStock { edits.replace("stock", with: .integer(Int64(stock))) }
        return edits.operations
    }
}
