import JSON
import Randomness

extension JSONValue {
    /// A random document of at most `depth` levels, with small keys so that documents overlap.
    static func random(depth: Int, using generator: inout SeededRandom) -> JSONValue {
        let kind = Int.random(in: 0..<(depth > 0 ? 8 : 5), using: &generator)
        switch kind {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .integer(Int64.random(in: -1000...1000, using: &generator))
        case 3: return .string(["a", "b", "x/y", "t~0", "", "ü"].randomElement(using: &generator)!)
        case 4: return .double(Double(Int.random(in: -100...100, using: &generator)) / 4 + 0.5)
        case 5, 6:
            var members = [String: JSONValue]()
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                let key = ["a", "b", "c", "d/e", "f~g", ""].randomElement(using: &generator)!
                members[key] = random(depth: depth - 1, using: &generator)
            }
            return .object(members)
        default:
            return .array((0..<Int.random(in: 0...5, using: &generator)).map { _ in random(depth: depth - 1, using: &generator) })
        }
    }
}
