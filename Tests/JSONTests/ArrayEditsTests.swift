import JSON
import JSONPatch
import Randomness
import Testing

/// `JSONPatch.arrayEdits` (typed) against `JSONPatch.diff` of the forms, on small-alphabet arrays where
/// shifts (both kinds) appear between a common prefix and suffix, around both whole-replacement thresholds.
@Suite struct ArrayEditsTests {
    struct Point: Equatable { var x: Int; var y: Int }

    static func form(_ p: Point) -> JSONValue { .object(["x": .integer(Int64(p.x)), "y": .integer(Int64(p.y))]) }

    static func edits(_ old: Point, _ new: Point, _ path: JSONPointer) -> [JSONPatchOperation] {
        let changed = [old.x != new.x, old.y != new.y]
        if JSONPatch.replacesWhole(changed: changed.count(where: { $0 }), of: 2) { return [.replace(path: path, value: form(new))] }
        var ops: [JSONPatchOperation] = []
        if changed[0] { ops.append(.replace(path: path.appending("x"), value: .integer(Int64(new.x)))) }
        if changed[1] { ops.append(.replace(path: path.appending("y"), value: .integer(Int64(new.y)))) }
        return ops
    }

    static func edited(_ old: [Point], _ random: inout SeededRandom) -> [Point] {
        func point() -> Point { Point(x: Int.random(in: 0..<3, using: &random), y: Int.random(in: 0..<2, using: &random)) }
        var new = old
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let n = new.count
            let lo = n == 0 ? 0 : Int.random(in: 0...n, using: &random)
            let hi = lo == n ? n : Int.random(in: lo...n, using: &random)
            var middle = Array(new[lo..<hi])
            let k = Int.random(in: 1...4, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0:  // dropped head, appended
                middle.removeFirst(min(k, middle.count)); middle += (0..<k).map { _ in point() }
            case 1:  // inserted head, dropped end
                middle.insert(contentsOf: (0..<k).map { _ in point() }, at: 0); middle.removeLast(min(k, middle.count))
            case 2:  // dropped head only, or appended more/less
                middle.removeFirst(min(k, middle.count)); middle += (0..<Int.random(in: 0...k + 1, using: &random)).map { _ in point() }
            case 3: if !middle.isEmpty { middle[Int.random(in: 0..<middle.count, using: &random)] = point() }
            case 4: middle.insert(point(), at: Int.random(in: 0...middle.count, using: &random))
            default: if !middle.isEmpty { middle.remove(at: Int.random(in: 0..<middle.count, using: &random)) }
            }
            new.replaceSubrange(lo..<hi, with: middle)
        }
        return new
    }

    @Test func typedEditsAreTheDiffOfTheForms() {
        var random = SeededRandom(seed: 0xA77A_1D17)
        var old = (0..<8).map { _ in Point(x: Int.random(in: 0..<3, using: &random), y: 0) }
        var shifts = 0, wholes = 0
        for _ in 0..<100_000 {
            var new = Bool.random(using: &random) ? Self.edited(old, &random) : old
            if Int.random(in: 0..<40, using: &random) == 0 {
                new = (0..<Int.random(in: 0..<14, using: &random)).map { _ in Point(x: Int.random(in: 0..<3, using: &random), y: 0) }
            }
            if new.count > 40 { new.removeFirst(new.count - 40) }
            let path = JSONPointer(tokens: ["a"])
            let ops = JSONPatch.arrayEdits(
                from: old, to: new, at: path, elementEdits: Self.edits, form: Self.form,
                whole: { .array(new.map(Self.form)) })
            let diff = JSONPatch.diff(from: ["a": .array(old.map(Self.form))], to: ["a": .array(new.map(Self.form))])
            #expect(ops == diff.operations, "old \(old) new \(new)")
            if ops.count == 1, case .replace(let p, _) = ops[0], p == path { wholes += 1 }
            if ops.contains(where: { if case .remove = $0 { true } else { false } }) && ops.contains(where: { if case .add = $0 { true } else { false } }) { shifts += 1 }
            old = new
        }
        #expect(shifts > 1000 && wholes > 100, "shifts \(shifts) wholes \(wholes)")
    }
}
