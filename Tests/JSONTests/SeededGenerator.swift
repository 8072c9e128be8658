import JSON

/// A deterministic random source (SplitMix64) so that randomised tests repeat exactly.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension JSONValue {
    /// A random document of at most `depth` levels, with small keys so that documents overlap.
    static func random(depth: Int, using generator: inout SeededGenerator) -> JSONValue {
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
