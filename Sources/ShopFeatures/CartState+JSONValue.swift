import JSON
import Shop

// The cart's state is encoded after every cart change, so it builds its JSON form itself instead of
// through Codable (see `JSONValueConvertible`): each member's form below is what its `Encodable`
// conformance gives, compared on random states in the tests (`StateFormTests`). A member added to one of
// these types must be added here too; the tests' random states then fail until it is.

extension CartState: JSONValueConvertible {
    /// The state's JSON form, reusing the previous form's unchanged lines.
    public func jsonValue(reusing memo: EncodingMemo?) -> JSONValue {
        .object([
            "phase": .string(phase.rawValue),
            "error": .orNull(error) { $0.jsonValue },
            "lines": .array(lines, reusing: memo) { $0.jsonValue },
            "totals": totals.jsonValue,
            "checkoutPhase": .string(checkoutPhase.rawValue),
            "checkoutError": .orNull(checkoutError) { $0.jsonValue },
            "lastOrder": .orNull(lastOrder) { $0.jsonValue(reusing: memo) },
            "notices": .array(notices, reusing: memo) { $0.jsonValue },
        ])
    }
}

extension CartLineSnapshot {
    /// The line's JSON form.
    var jsonValue: JSONValue {
        [
            "productId": .string(productId), "name": .string(name), "unitPrice": unitPrice.jsonValue,
            "quantity": .integer(Int64(quantity)),
        ]
    }
}

extension CartTotals {
    /// The figures' JSON form.
    var jsonValue: JSONValue {
        [
            "itemCount": .integer(Int64(itemCount)), "subtotal": subtotal.jsonValue, "tax": tax.jsonValue,
            "total": total.jsonValue,
        ]
    }
}

extension CartNotice {
    /// The notice's JSON form.
    var jsonValue: JSONValue {
        ["productId": .string(productId), "name": .string(name), "reason": .string(reason.rawValue), "message": .string(message)]
    }
}

extension ErrorInfo {
    /// The error's JSON form.
    var jsonValue: JSONValue {
        ["message": .string(message), "retryable": .bool(retryable)]
    }
}

extension OrderSnapshot {
    /// The order's JSON form, reusing the previous form's unchanged lines.
    func jsonValue(reusing memo: EncodingMemo?) -> JSONValue {
        [
            "id": .string(id), "createdAt": .string(createdAt.iso8601),
            "lines": .array(lines, reusing: memo) { $0.jsonValue },
            "itemCount": .integer(Int64(itemCount)), "subtotal": subtotal.jsonValue, "tax": tax.jsonValue,
            "total": total.jsonValue,
        ]
    }
}

extension OrderLineSnapshot {
    /// The order line's JSON form.
    var jsonValue: JSONValue {
        [
            "productId": .string(productId), "name": .string(name), "unitPrice": unitPrice.jsonValue,
            "quantity": .integer(Int64(quantity)), "lineTotal": lineTotal.jsonValue,
        ]
    }
}

extension Money {
    /// The amount's JSON form: its decimal string, as its `Encodable` conformance writes it.
    var jsonValue: JSONValue { .string(description) }
}
