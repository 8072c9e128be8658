import JSON
import JSONPatch
import Randomness
import ShopFeatures
import Testing

/// A price ticker's own patch (`JSONPatchDiffable`) against `JSONPatch.diff` of the two JSON forms: along random
/// walks of edits (points appended with as many dropped at the head, as a market tick does; points changed,
/// inserted at the head or removed; the other members), each patch the state makes is the diff's, operation for
/// operation, and applied to the old form gives the new one.
@Suite struct PriceTickerStatePatchTests {
    @Test func ownPatchIsTheDiffOfTheForms() throws {
        var random = SeededRandom(seed: 0x5449_434B)
        let start = StateFormTests.randomPriceTickerState(&random)
        let made = try walkOwnPatches(of: PriceTickerState.self, from: start, steps: 4000, &random, edited: Self.edited)
        // Most edits are the state's own; the rest (an error replacing another, most members at once) go to the diff.
        #expect(made * 10 > 4000 * 8, "made \(made) of 4000")
    }

    /// A tick of 10 points on a full history of 100: 10 removes at the head and 10 adds at the end, made by the
    /// state, as the diff makes them.
    @Test func aTickIsTheEditsAtBothEnds() throws {
        var random = SeededRandom(seed: 100)
        guard case .object(var members) = StateFormTests.randomPriceTickerState(&random) else { return }
        let points: [JSONValue] = (0..<110).map { index in
            ["price": .string("\(index / 100).\(index % 100 < 10 ? "0" : "")\(index % 100)"), "stock": .integer(Int64(index)),
             "at": .string("2026-11-29T10:00:\(index % 60 < 10 ? "0" : "")\(index % 60)Z")]
        }
        members["priceHistory"] = .array(Array(points[0..<100]))
        let old = try JSONValueDecoder().decode(PriceTickerState.self, from: .object(members))
        members["priceHistory"] = .array(Array(points[10..<110]))
        let new = try JSONValueDecoder().decode(PriceTickerState.self, from: .object(members))
        let patch = try #require(new.patch(from: old))
        #expect(patch == JSONPatch.diff(from: old.jsonValue(reusing: nil), to: new.jsonValue(reusing: nil)))
        #expect(patch.operations.count == 20)
        #expect(patch.operations.first == .remove(path: JSONPointer(tokens: ["priceHistory", "0"])))
    }

    /// One edit of a ticker's wire value.
    static func edited(_ state: JSONValue, _ random: inout SeededRandom) -> JSONValue {
        guard case .object(var members) = state, case .array(var points) = members["priceHistory"] else { return state }
        let fresh = StateFormTests.randomPriceTickerState(&random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<4:  // a tick: points appended, as many dropped at the head once the history is full
            let count = Int.random(in: 1...4, using: &random)
            points += (0..<count).map { _ in StateFormTests.randomPricePoint(&random) }
            if points.count > 12 { points.removeFirst(points.count - 12) }
            members["currentPrice"] = points.last?["price"] ?? .null
        case 4: points.insert(StateFormTests.randomPricePoint(&random), at: 0); if points.count > 12 { points.removeLast() }
        case 5 where !points.isEmpty: points[Int.random(in: 0..<points.count, using: &random)] = StateFormTests.randomPricePoint(&random)
        case 6 where !points.isEmpty: points.remove(at: Int.random(in: 0..<points.count, using: &random))
        case 7:
            for key in ["phase", "error", "name", "stock", "isConnected"] where Bool.random(using: &random) { members[key] = fresh[key] }
        case 8: return fresh
        default: members["stock"] = fresh["stock"]
        }
        members["priceHistory"] = .array(points)
        return .object(members)
    }
}
