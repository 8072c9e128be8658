import JSON
import Shop

// A price ticker's state changes with every stored change of its product (a market simulation makes hundreds
// a second): it builds its JSON form itself instead of through Codable (see `JSONValueConvertible`), the form
// its `Encodable` conformance gives (`StateFormTests` compares them on random states). A member added to one of
// these types must be added here too; those tests then fail until it is.

extension PriceTickerState: JSONValueConvertible {
    /// The state's JSON form, reusing the previous form's points where they are where they were.
    public func jsonValue(reusing memo: EncodingMemo?) -> JSONValue {
        .object([
            "phase": .string(phase.rawValue),
            "error": .orNull(error) { $0.jsonValue },
            "productId": .string(productId),
            "name": .string(name),
            "currentPrice": .orNull(currentPrice) { $0.jsonValue },
            "stock": .orNull(stock) { .integer(Int64($0)) },
            "priceHistory": .array(priceHistory, reusing: memo) { $0.jsonValue },
            "isConnected": .bool(isConnected),
        ])
    }
}

extension PricePointSnapshot {
    /// The point's JSON form.
    var jsonValue: JSONValue {
        ["price": price.jsonValue, "stock": .integer(Int64(stock)), "at": .string(at.iso8601)]
    }
}
