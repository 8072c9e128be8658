import JSON
import JSONPatch
import Randomness
import ShopFeatures
import Testing

/// A product page's own patch against `JSONPatch.diff`, with old and new drawn so that every
/// member (and every product member) changes independently with a probability swept from rare to almost all,
/// which crosses both whole-replacement thresholds (13 members at the root, 10 in the product) from both sides,
/// and with every null<->value transition and an error replacing another. When the state leaves a change to the
/// diff (nil), it must be one of the two documented cases.
@Suite struct ProductDetailStatePatchThresholdTests {
    static let scalarKeys = [
        "phase", "isFavorite", "canToggleFavorite", "inCart", "quantity", "maxQuantity", "totalPrice", "canAddToCart",
        "isOutOfStock", "isAddingToCart", "didAddToCart",
    ]

    /// `value` with each member replaced by `fresh`'s with probability `p` (a replacement may be equal).
    static func mix(_ value: JSONValue, _ fresh: JSONValue, _ p: Double, _ random: inout SeededRandom) -> JSONValue {
        guard case .object(var members) = value, case .object(let other) = fresh else { return value }
        for key in members.keys.sorted() where Double.random(in: 0..<1, using: &random) < p { members[key] = other[key] }
        return .object(members)
    }

    @Test func ownPatchIsTheDiffAcrossThresholds() throws {
        var random = SeededRandom(seed: 0xBAD_C0DE)
        var made = 0, left = 0
        for round in 0..<20_000 {
            let p = [0.05, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0][round % 7]
            let oldWire = StateFormTests.randomProductDetailState(&random)
            guard case .object(var members) = Self.mix(oldWire, StateFormTests.randomProductDetailState(&random), p, &random) else { return }
            // The product: changed member by member (same threshold sweep), or appearing/going, or kept.
            switch Int.random(in: 0..<4, using: &random) {
            case 0, 1:
                if case .object = oldWire["product"] ?? .null {
                    members["product"] = Self.mix(oldWire["product"]!, StateFormTests.randomProductInfo(&random),
                                                  Double.random(in: 0...1, using: &random), &random)
                }
            case 2: members["product"] = Bool.random(using: &random) ? .null : StateFormTests.randomProductInfo(&random)
            default: members["product"] = oldWire["product"]
            }
            // The error: kept, appearing/going, or replaced by another (left to the diff).
            switch Int.random(in: 0..<4, using: &random) {
            case 0: members["error"] = oldWire["error"]
            case 1: members["error"] = .null
            case 2: members["error"] = StateFormTests.randomError(&random)
            default:
                if case .object(var error) = oldWire["error"] ?? .null {
                    error["retryable"] = .bool(!(error["retryable"]?.boolValue ?? false))
                    members["error"] = .object(error)
                }
            }
            let old = try JSONValueDecoder().decode(ProductDetailState.self, from: oldWire)
            let new = try JSONValueDecoder().decode(ProductDetailState.self, from: .object(members))
            let oldForm = old.jsonValue(reusing: nil), newForm = new.jsonValue(reusing: nil)
            #expect(oldForm == (try JSONValueEncoder().encode(old)))
            let diff = JSONPatch.diff(from: oldForm, to: newForm)
            guard let patch = new.patch(from: old) else {
                left += 1
                let errorReplaced = old.error != nil && new.error != nil && old.error != new.error
                let wholeReplaced = diff.operations == [.replace(path: .root, value: newForm)]
                #expect(errorReplaced || wholeReplaced, "left to the diff without cause: \(oldForm) -> \(newForm)")
                continue
            }
            made += 1
            #expect(patch == diff, "\(oldForm) -> \(newForm)")
            #expect(try patch.apply(to: oldForm) == newForm)
            if patch != diff { return }
        }
        #expect(made > 5_000 && left > 1_000, "made \(made), left \(left)")
    }

    /// Exactly at the thresholds: k of the 10 product members changed (k = 0...10), with j of the root's scalars.
    @Test func ownPatchAtEachCountOfChangedMembers() throws {
        var random = SeededRandom(seed: 77)
        let productKeys = ["category", "createdAt", "description", "id", "inStock", "isFeatured", "maxPerOrder", "name", "price", "stock"]
        for k in 0...10 {
            for j in 0...Self.scalarKeys.count {
                for _ in 0..<20 {
                    guard case .object(var members) = StateFormTests.randomProductDetailState(&random),
                          case .object(let product) = StateFormTests.randomProductInfo(&random) else { return }
                    members["product"] = .object(product)
                    members["error"] = .null
                    let oldWire = JSONValue.object(members)
                    var changedProduct = product
                    for key in productKeys.shuffled(using: &random).prefix(k) {
                        changedProduct[key] = Self.different(product[key]!, key: key)
                    }
                    members["product"] = .object(changedProduct)
                    for key in Self.scalarKeys.shuffled(using: &random).prefix(j) {
                        members[key] = Self.different(members[key]!, key: key)
                    }
                    let old = try JSONValueDecoder().decode(ProductDetailState.self, from: oldWire)
                    let new = try JSONValueDecoder().decode(ProductDetailState.self, from: .object(members))
                    let diff = JSONPatch.diff(from: old.jsonValue(reusing: nil), to: new.jsonValue(reusing: nil))
                    if let patch = new.patch(from: old) {
                        #expect(patch == diff, "k \(k) j \(j)")
                    } else {
                        #expect(diff.operations == [.replace(path: .root, value: new.jsonValue(reusing: nil))], "k \(k) j \(j): left without cause")
                    }
                }
            }
        }
    }

    /// A value of the same member that differs from `value`.
    static func different(_ value: JSONValue, key: String) -> JSONValue {
        switch (key, value) {
        case ("phase", .string(let phase)): return phase == "loaded" ? "failed" : "loaded"
        case ("createdAt", .string(let date)): return date == "2026-11-29T10:00:00Z" ? "2025-01-02T03:04:05Z" : "2026-11-29T10:00:00Z"
        case ("price", _), ("totalPrice", .string): return value == "1.00" ? "2.00" : "1.00"
        case ("totalPrice", .null): return "3.00"
        case (_, .bool(let bool)): return .bool(!bool)
        case (_, .integer(let integer)): return .integer(integer == 1 ? 2 : 1)
        case (_, .null): return key == "isFavorite" ? true : 5
        case (_, .string(let text)): return .string(text + "x")
        default: return value
        }
    }
}
