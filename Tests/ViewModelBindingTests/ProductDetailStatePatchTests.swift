import JSON
import JSONPatch
import Randomness
import ShopFeatures
import Testing

/// A product page's own patch (`JSONPatchDiffable`) against `JSONPatch.diff` of the two JSON forms: along random
/// walks of edits, each patch the state makes is the diff's, operation for operation, and applied to the old
/// form gives the new one; the edits a page sees most (the cart's units, what can be added, the product's stock
/// or price) are made by the state, not left to the diff.
@Suite struct ProductDetailStatePatchTests {
    @Test func ownPatchIsTheDiffOfTheForms() throws {
        var random = SeededRandom(seed: 0x5044_5041_5443_48)
        let start = StateFormTests.randomProductDetailState(&random)
        let made = try walkOwnPatches(of: ProductDetailState.self, from: start, steps: 3000, &random, edited: Self.edited)
        // Most edits are the state's own; the rest (an error replacing another, most members at once) go to the diff.
        #expect(made * 10 > 3000 * 7, "made \(made) of 3000")
    }

    /// The cart gained a unit of the product: the units in the cart and what can still be added, as the diff makes them.
    @Test func cartUnitsArePatchedByTheState() throws {
        var random = SeededRandom(seed: 11)
        guard case .object(var members) = StateFormTests.randomProductDetailState(&random) else { return }
        members["product"] = StateFormTests.randomProductInfo(&random)
        members["inCart"] = 1
        members["maxQuantity"] = 4
        let old = try JSONValueDecoder().decode(ProductDetailState.self, from: .object(members))
        var new = old
        new.inCart = 2
        new.maxQuantity = 3
        let patch = try #require(new.patch(from: old))
        #expect(patch == JSONPatch.diff(from: old.jsonValue(reusing: nil), to: new.jsonValue(reusing: nil)))
        #expect(patch.operations == [
            .replace(path: JSONPointer(tokens: ["inCart"]), value: 2), .replace(path: JSONPointer(tokens: ["maxQuantity"]), value: 3),
        ])
    }

    /// Equal states: an empty patch.
    @Test func equalStatesMakeAnEmptyPatch() throws {
        var random = SeededRandom(seed: 4)
        let state = try JSONValueDecoder().decode(ProductDetailState.self, from: StateFormTests.randomProductDetailState(&random))
        #expect(state.patch(from: state) == JSONPatch([]))
    }

    /// One edit of a product page's wire value: one to three members changed, a product's members changed, the
    /// product or the error appearing, going or replaced, or a new random state.
    static func edited(_ state: JSONValue, _ random: inout SeededRandom) -> JSONValue {
        guard case .object(var members) = state else { return state }
        let fresh = StateFormTests.randomProductDetailState(&random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<5:
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let key = members.keys.filter { $0 != "product" && $0 != "error" }.sorted().randomElement(using: &random)!
                members[key] = fresh[key]
            }
        case 5..<8:
            guard case .object(var product)? = members["product"], case .object(let other) = StateFormTests.randomProductInfo(&random) else {
                members["product"] = StateFormTests.randomProductInfo(&random)
                break
            }
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let key = product.keys.sorted().randomElement(using: &random)!
                product[key] = other[key]
            }
            members["product"] = .object(product)
        case 8:
            let key = Bool.random(using: &random) ? "product" : "error"
            members[key] = Bool.random(using: &random) ? .null : fresh[key] ?? .null
        default: return fresh
        }
        return .object(members)
    }
}
