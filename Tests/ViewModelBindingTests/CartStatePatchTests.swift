import JSON
import JSONPatch
import Randomness
import ShopFeatures
import Testing

/// The cart state's own patch (`JSONPatchDiffable`) against `JSONPatch.diff` of the two JSON forms: along
/// random walks of edits, each patch the state makes is the diff's, operation for operation, and applied to
/// the old form gives the new one; the common edits (a quantity, a line added or removed, the totals) are
/// made by the state, not left to the diff.
@Suite struct CartStatePatchTests {
    @Test func ownPatchIsTheDiffOfTheForms() throws {
        var random = SeededRandom(seed: 0x5041_5443_48)
        let start = StateFormTests.randomCartState(&random)
        let made = try walkOwnPatches(of: CartState.self, from: start, steps: 3000, &random, edited: Self.edited)
        // Most edits are the state's own; the rest (another error, order or notices) go to the diff.
        #expect(made * 10 > 3000 * 6, "made \(made) of 3000")
    }

    /// A quantity changed in a 20-line cart: the line's quantity and the totals, as the diff makes them.
    @Test func quantityChangeIsPatchedByTheState() throws {
        var random = SeededRandom(seed: 20)
        guard case .object(var members) = StateFormTests.randomCartState(&random) else { return }
        members["lines"] = .array((0..<20).map { _ in StateFormTests.randomLine(&random) })
        members["notices"] = []
        let old = try JSONValueDecoder().decode(CartState.self, from: .object(members))
        var new = old
        new.lines[7].quantity += 1
        new.totals.itemCount += 1
        let patch = try #require(new.patch(from: old))
        #expect(patch == JSONPatch.diff(from: old.jsonValue(reusing: nil), to: new.jsonValue(reusing: nil)))
        #expect(patch.operations.first == .replace(path: JSONPointer(tokens: ["lines", "7", "quantity"]), value: .integer(Int64(new.lines[7].quantity))))
        #expect(patch.operations.count == 2)
    }

    /// Equal states: an empty patch.
    @Test func equalStatesMakeAnEmptyPatch() throws {
        var random = SeededRandom(seed: 3)
        let state = try JSONValueDecoder().decode(CartState.self, from: StateFormTests.randomCartState(&random))
        #expect(state.patch(from: state) == JSONPatch([]))
    }

    /// One edit of a cart state's wire value: those of `StateFormTests.edited`, and the ones a cart change
    /// makes besides (the totals, a phase, a line's price or name, several lines at once).
    static func edited(_ state: JSONValue, _ random: inout SeededRandom) -> JSONValue {
        guard case .object(var members) = state, case .array(var lines) = members["lines"] else { return state }
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            members["totals"] = [
                "itemCount": .integer(Int64.random(in: 0...3, using: &random)), "subtotal": StateFormTests.randomMoney(&random),
                "tax": members["totals"]?["tax"] ?? "0.00", "total": StateFormTests.randomMoney(&random),
            ]
        case 1: members["phase"] = .string(["idle", "loading", "loaded", "failed"].randomElement(using: &random)!)
        case 2: members["checkoutPhase"] = .string(["idle", "submitting", "succeeded", "failed"].randomElement(using: &random)!)
        case 3 where !lines.isEmpty:
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let index = Int.random(in: 0..<lines.count, using: &random)
                if case .object(var line) = lines[index] {
                    if Bool.random(using: &random) { line["unitPrice"] = StateFormTests.randomMoney(&random) }
                    if Bool.random(using: &random) { line["name"] = StateFormTests.randomText(&random) }
                    if Bool.random(using: &random) { line["quantity"] = .integer(Int64.random(in: 1...3, using: &random)) }
                    lines[index] = .object(line)
                }
            }
            members["lines"] = .array(lines)
        case 4: members["lines"] = .array(Array(lines.dropFirst(Int.random(in: 0...2, using: &random))) + [StateFormTests.randomLine(&random)])
        default: return StateFormTests.edited(state, &random)
        }
        return .object(members)
    }
}
