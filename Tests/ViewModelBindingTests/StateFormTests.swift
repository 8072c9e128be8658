import Foundation
import JSON
import Randomness
import ShopFeatures
import Testing

/// The hand-built JSON forms of states (`JSONValueConvertible`) against their `Encodable` conformance,
/// as Foundation's `JSONEncoder` writes it: random states are made by decoding random wire values, so
/// every member the wire has is covered, and a member added to a state but not to its form fails here.
@Suite struct StateFormTests {
    @Test func cartStateFormIsItsEncodableForm() throws {
        var random = SeededRandom(seed: 0x5747_4154_4546_4F52)
        for _ in 0..<400 {
            let state = try JSONValueDecoder().decode(CartState.self, from: Self.randomCartState(&random))
            #expect(state.jsonValue(reusing: nil) == (try Self.foundationForm(of: state)))
        }
    }

    /// A memo reuses only the forms of equal lines: along a random walk of edits (a line changed, added,
    /// removed, an order placed, notices), every form built with the memo equals the one built without.
    @Test func cartStateFormWithMemoEqualsFreshForm() throws {
        var random = SeededRandom(seed: 0x4D45_4D4F)
        let memo = EncodingMemo()
        var wire = Self.randomCartState(&random)
        for _ in 0..<500 {
            wire = Self.edited(wire, &random)
            let state = try JSONValueDecoder().decode(CartState.self, from: wire)
            let reused = try JSONValueEncoder().encode(state, reusing: memo)
            #expect(reused == state.jsonValue(reusing: nil))
            #expect(reused == (try Self.foundationForm(of: state)))
        }
    }

    /// The encoder takes the hand-built form of a conforming value, with or without a memo.
    @Test func encoderUsesTheForm() throws {
        var random = SeededRandom(seed: 7)
        let state = try JSONValueDecoder().decode(CartState.self, from: Self.randomCartState(&random))
        #expect(try JSONValueEncoder().encode(state) == state.jsonValue(reusing: nil))
    }

    @Test func productDetailStateFormIsItsEncodableForm() throws {
        var random = SeededRandom(seed: 0x5052_4F44_5543_54)
        for _ in 0..<400 {
            let state = try JSONValueDecoder().decode(ProductDetailState.self, from: Self.randomProductDetailState(&random))
            #expect(state.jsonValue(reusing: nil) == (try Self.foundationForm(of: state)))
            #expect(try JSONValueEncoder().encode(state) == state.jsonValue(reusing: nil))
        }
    }

    @Test func priceTickerStateFormIsItsEncodableForm() throws {
        var random = SeededRandom(seed: 0x5449_434B_4552)
        let memo = EncodingMemo()
        for _ in 0..<300 {
            let state = try JSONValueDecoder().decode(PriceTickerState.self, from: Self.randomPriceTickerState(&random))
            #expect(state.jsonValue(reusing: nil) == (try Self.foundationForm(of: state)))
            #expect(try JSONValueEncoder().encode(state, reusing: memo) == state.jsonValue(reusing: nil))
        }
    }

    static func foundationForm<T: Encodable>(of value: T) throws -> JSONValue {
        let data = try JSONEncoder().encode(value)
        return try data.withUnsafeBytes { try JSONValue(parsing: $0) }
    }

    // MARK: Random wire values

    static func randomCartState(_ random: inout SeededRandom) -> JSONValue {
        let lines = (0..<Int.random(in: 0...6, using: &random)).map { _ in randomLine(&random) }
        return [
            "phase": .string(["idle", "loading", "loaded", "failed"].randomElement(using: &random)!),
            "error": maybe(&random) { randomError(&$0) },
            "lines": .array(lines),
            "totals": [
                "itemCount": .integer(Int64.random(in: 0...500, using: &random)), "subtotal": randomMoney(&random),
                "tax": randomMoney(&random), "total": randomMoney(&random),
            ],
            "checkoutPhase": .string(["idle", "submitting", "succeeded", "failed"].randomElement(using: &random)!),
            "checkoutError": maybe(&random) { randomError(&$0) },
            "lastOrder": maybe(&random) { randomOrder(&$0) },
            "notices": .array((0..<Int.random(in: 0...2, using: &random)).map { _ in randomNotice(&random) }),
        ]
    }

    /// One edit of a cart state's wire value: what a change, a checkout or a notice does to it.
    static func edited(_ state: JSONValue, _ random: inout SeededRandom) -> JSONValue {
        guard case .object(var members) = state, case .array(var lines) = members["lines"] else { return state }
        switch Int.random(in: 0..<6, using: &random) {
        case 0 where !lines.isEmpty:
            let index = Int.random(in: 0..<lines.count, using: &random)
            if case .object(var line) = lines[index] {
                line["quantity"] = .integer(Int64.random(in: 1...9, using: &random))
                lines[index] = .object(line)
            }
        case 1: lines.insert(randomLine(&random), at: Int.random(in: 0...lines.count, using: &random))
        case 2 where !lines.isEmpty: lines.remove(at: Int.random(in: 0..<lines.count, using: &random))
        case 3: members["lastOrder"] = maybe(&random) { randomOrder(&$0) }
        case 4: members["notices"] = .array((0..<Int.random(in: 0...2, using: &random)).map { _ in randomNotice(&random) })
        default: members["error"] = maybe(&random) { randomError(&$0) }
        }
        members["lines"] = .array(lines)
        return .object(members)
    }

    static func randomProductDetailState(_ random: inout SeededRandom) -> JSONValue {
        func bool(_ random: inout SeededRandom) -> JSONValue { .bool(Bool.random(using: &random)) }
        func count(_ random: inout SeededRandom) -> JSONValue { .integer(Int64.random(in: 0...12, using: &random)) }
        return [
            "phase": .string(["idle", "loading", "loaded", "failed"].randomElement(using: &random)!),
            "error": maybe(&random) { randomError(&$0) },
            "product": maybe(&random) { randomProductInfo(&$0) },
            "isFavorite": maybe(&random) { bool(&$0) },
            "canToggleFavorite": bool(&random),
            "inCart": maybe(&random) { count(&$0) },
            "quantity": count(&random),
            "maxQuantity": count(&random),
            "totalPrice": maybe(&random) { randomMoney(&$0) },
            "canAddToCart": bool(&random),
            "isOutOfStock": bool(&random),
            "isAddingToCart": bool(&random),
            "didAddToCart": bool(&random),
        ]
    }

    static func randomProductInfo(_ random: inout SeededRandom) -> JSONValue {
        [
            "id": randomText(&random), "name": randomText(&random), "description": randomText(&random),
            "price": randomMoney(&random), "category": randomText(&random),
            "stock": .integer(Int64.random(in: 0...50, using: &random)), "maxPerOrder": .integer(Int64.random(in: 1...10, using: &random)),
            "inStock": .bool(Bool.random(using: &random)), "isFeatured": .bool(Bool.random(using: &random)),
            "createdAt": .string(["2026-11-29T10:00:00Z", "2025-01-02T03:04:05Z"].randomElement(using: &random)!),
        ]
    }

    static func randomPriceTickerState(_ random: inout SeededRandom) -> JSONValue {
        [
            "phase": .string(["idle", "loading", "loaded", "failed"].randomElement(using: &random)!),
            "error": maybe(&random) { randomError(&$0) },
            "productId": randomText(&random),
            "name": randomText(&random),
            "currentPrice": maybe(&random) { randomMoney(&$0) },
            "stock": maybe(&random) { .integer(Int64.random(in: 0...50, using: &$0)) },
            "priceHistory": .array((0..<Int.random(in: 0...12, using: &random)).map { _ in randomPricePoint(&random) }),
            "isConnected": .bool(Bool.random(using: &random)),
        ]
    }

    /// A point drawn from few values, so that equal neighbours (and shifts the diff recognises) come up.
    static func randomPricePoint(_ random: inout SeededRandom) -> JSONValue {
        [
            "price": .string(["1.00", "1.05", "0.99"].randomElement(using: &random)!),
            "stock": .integer(Int64.random(in: 0...2, using: &random)),
            "at": .string(["2026-11-29T10:00:00Z", "2026-11-29T10:00:01Z"].randomElement(using: &random)!),
        ]
    }

    static func randomLine(_ random: inout SeededRandom) -> JSONValue {
        [
            "productId": randomText(&random), "name": randomText(&random), "unitPrice": randomMoney(&random),
            "quantity": .integer(Int64.random(in: 1...99, using: &random)),
        ]
    }

    static func randomOrder(_ random: inout SeededRandom) -> JSONValue {
        let lines: [JSONValue] = (0..<Int.random(in: 1...4, using: &random)).map { _ in
            [
                "productId": randomText(&random), "name": randomText(&random), "unitPrice": randomMoney(&random),
                "quantity": .integer(Int64.random(in: 1...20, using: &random)), "lineTotal": randomMoney(&random),
            ]
        }
        return [
            "id": randomText(&random), "createdAt": randomText(&random), "lines": .array(lines),
            "itemCount": .integer(Int64.random(in: 1...80, using: &random)), "subtotal": randomMoney(&random),
            "tax": randomMoney(&random), "total": randomMoney(&random),
        ]
    }

    static func randomNotice(_ random: inout SeededRandom) -> JSONValue {
        [
            "productId": randomText(&random), "name": randomText(&random),
            "reason": .string(["productDeleted", "quantityCapped"].randomElement(using: &random)!),
            "message": randomText(&random),
        ]
    }

    static func randomError(_ random: inout SeededRandom) -> JSONValue {
        ["message": randomText(&random), "retryable": .bool(Bool.random(using: &random))]
    }

    /// An amount as the wire writes it, negative and sub-unit ones included.
    static func randomMoney(_ random: inout SeededRandom) -> JSONValue {
        let minor = Int64.random(in: -2_000...2_000_000, using: &random)
        let magnitude = minor.magnitude
        return .string("\(minor < 0 ? "-" : "")\(magnitude / 100).\(magnitude % 100 < 10 ? "0" : "")\(magnitude % 100)")
    }

    /// Text with what escaping and Unicode make awkward: quotes, backslashes, controls, accents, emoji.
    static func randomText(_ random: inout SeededRandom) -> JSONValue {
        let pieces = ["oak", "Ünïcödé", "\"", "\\", "\n", "\u{1}", "😀", " ", "é", "/", "~", ""]
        return .string((0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined())
    }

    static func maybe(_ random: inout SeededRandom, _ make: (inout SeededRandom) -> JSONValue) -> JSONValue {
        Bool.random(using: &random) ? make(&random) : .null
    }
}
