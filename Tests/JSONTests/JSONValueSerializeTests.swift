import JSON
import Randomness
import Testing

/// The Swift serialiser writes what jansson writes, byte for byte.
@Suite struct JSONValueSerializeTests {
    static let awkwardStrings = [
        "", "plain", "quote \" and backslash \\", "slash / stays", "tab\tnewline\nreturn\rbell\u{07}nul\u{00}esc\u{1B}",
        "\u{08}\u{0C}\u{1F}\u{7F}", "ü é e\u{301} 日本 🛒", "\u{2028}\u{2029}", "~0/~1",
    ]
    static let awkwardKeys = ["", "a", "B", "Z", "aa", "a\u{00}b", "é", "z", "ü", "日", "🛒", "_", "A", "0"]
    static let awkwardReals: [Double] = [
        0, -0.0, 0.1, -2.5, 1.0, 100, 1e16, 1e17, 1e21, 1e300, -1e-7, 5e-324, 123456789.123, .pi, 1 / 3,
        .greatestFiniteMagnitude, .leastNormalMagnitude, .infinity, -.infinity, .nan,
    ]
    static let awkwardIntegers: [Int64] = [0, 1, 9, 10, -1, -10, 1234567890, .max, .min]

    @Test func awkwardScalarsAreWrittenAsJanssonWritesThem() {
        var values: [JSONValue] = [.null, .bool(true), .bool(false), [], [:]]
        values += Self.awkwardStrings.map { .string($0) }
        values += Self.awkwardReals.map { .double($0) }
        values += Self.awkwardIntegers.map { .integer($0) }
        for value in values {
            #expect(serialized(value) == janssonSerialized(value), "\(String(reflecting: value))")
        }
        let keyed = JSONValue.object(Dictionary(uniqueKeysWithValues: Self.awkwardKeys.enumerated().map { ($1, .integer(Int64($0))) }))
        #expect(serialized(keyed) == janssonSerialized(keyed))
    }

    @Test func randomDocumentsAreWrittenAsJanssonWritesThem() {
        var generator = SeededRandom(seed: 1618)
        for _ in 0..<2_000 {
            let value = Self.random(depth: 4, using: &generator)
            #expect(serialized(value) == janssonSerialized(value), "\(String(reflecting: value))")
        }
    }

    private func serialized(_ value: JSONValue) -> [UInt8] {
        var buffer: [UInt8] = []
        value.serialize(into: &buffer)
        return buffer
    }

    private func janssonSerialized(_ value: JSONValue) -> [UInt8] {
        var buffer: [UInt8] = []
        value.janssonSerialize(into: &buffer)
        return buffer
    }

    static func random(depth: Int, using generator: inout SeededRandom) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 9 : 6), using: &generator) {
        case 0: return .string(awkwardStrings.randomElement(using: &generator)!)
        case 1: return .double(awkwardReals.randomElement(using: &generator)!)
        case 2: return .double(Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator)))
        case 3: return .integer(Int64.random(in: .min ... .max, using: &generator))
        case 4: return .integer(awkwardIntegers.randomElement(using: &generator)!)
        case 5: return JSONValue.random(depth: 0, using: &generator)
        case 6:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                members[awkwardKeys.randomElement(using: &generator)!] = random(depth: depth - 1, using: &generator)
            }
            return .object(members)
        case 7: return .array((0..<Int.random(in: 0...5, using: &generator)).map { _ in random(depth: depth - 1, using: &generator) })
        default: return JSONValue.random(depth: depth, using: &generator)
        }
    }
}
