import JSON
import JSONPatch
import Shop

// The cart's state changes on every cart change, usually in one line's quantity and the totals: it finds its
// patch by comparing the typed states (see `JSONPatchDiffable`), the operations `JSONPatch.diff` makes from
// the two JSON forms (`StateFormTests` compares them on random pairs). Changes of its rarer members (an
// error or the last order replacing another, the notices) are left to that diff.

extension CartState: JSONPatchDiffable {
    /// The patch from `old`'s JSON form to this state's, or nil to leave it to `JSONPatch.diff`.
    public func patch(from old: CartState) -> JSONPatch? {
        // The members in key order, as the diff visits them.
        var edits = ObjectEdits(at: .root, memberCount: 8)
        if checkoutError != old.checkoutError {
            guard checkoutError == nil || old.checkoutError == nil else { return nil }
            edits.replace("checkoutError", with: .orNull(checkoutError) { $0.jsonValue })
        }
        if checkoutPhase != old.checkoutPhase { edits.replace("checkoutPhase", with: .string(checkoutPhase.rawValue)) }
        if error != old.error {
            guard error == nil || old.error == nil else { return nil }
            edits.replace("error", with: .orNull(error) { $0.jsonValue })
        }
        if lastOrder != old.lastOrder {
            guard lastOrder == nil || old.lastOrder == nil else { return nil }
            edits.replace("lastOrder", with: .orNull(lastOrder) { $0.jsonValue(reusing: nil) })
        }
        if lines != old.lines {
            edits.nested(JSONPatch.arrayEdits(
                from: old.lines, to: lines, at: JSONPointer(tokens: ["lines"]),
                elementEdits: { old, new, path in new.edits(from: old, at: path) },
                form: \.jsonValue, whole: { .array(lines.map(\.jsonValue)) }))
        }
        if notices != old.notices { return nil }
        if phase != old.phase { edits.replace("phase", with: .string(phase.rawValue)) }
        if totals != old.totals { edits.nested(totals.edits(from: old.totals)) }
        // The diff replaces the whole state then: left to it, which builds the whole form anyway.
        guard !edits.replacesWhole else { return nil }
        return JSONPatch(edits.operations)
    }
}

extension CartLineSnapshot {
    /// The operations from `old`'s form to this line's, for the line at `path`.
    func edits(from old: CartLineSnapshot, at path: JSONPointer) -> [JSONPatchOperation] {
        let changed = [name != old.name, productId != old.productId, quantity != old.quantity, unitPrice != old.unitPrice]
        // Counted first: a line replaced whole builds no member values.
        guard !JSONPatch.replacesWhole(changed: changed.count(where: { $0 }), of: 4) else {
            return [.replace(path: path, value: jsonValue)]
        }
        var edits = ObjectEdits(at: path, memberCount: 4)
        if changed[0] { edits.replace("name", with: .string(name)) }
        if changed[1] { edits.replace("productId", with: .string(productId)) }
        if changed[2] { edits.replace("quantity", with: .integer(Int64(quantity))) }
        if changed[3] { edits.replace("unitPrice", with: unitPrice.jsonValue) }
        return edits.operations
    }
}

extension CartTotals {
    /// The operations from `old`'s form to these figures', at `/totals`.
    func edits(from old: CartTotals) -> [JSONPatchOperation] {
        let path = JSONPointer(tokens: ["totals"])
        let changed = [itemCount != old.itemCount, subtotal != old.subtotal, tax != old.tax, total != old.total]
        guard !JSONPatch.replacesWhole(changed: changed.count(where: { $0 }), of: 4) else {
            return [.replace(path: path, value: jsonValue)]
        }
        var edits = ObjectEdits(at: path, memberCount: 4)
        if changed[0] { edits.replace("itemCount", with: .integer(Int64(itemCount))) }
        if changed[1] { edits.replace("subtotal", with: subtotal.jsonValue) }
        if changed[2] { edits.replace("tax", with: tax.jsonValue) }
        if changed[3] { edits.replace("total", with: total.jsonValue) }
        return edits.operations
    }
}
