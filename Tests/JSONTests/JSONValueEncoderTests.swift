import Foundation
import JSON
import Randomness
import Testing

/// The encoder gives what Foundation's `JSONEncoder` writes, read back as a `JSONValue`, for the shapes
/// state snapshots take: nested structs, arrays of them, optionals, single-value wrappers, other integer
/// widths, and containers written through nested and super encoders.
@Suite struct JSONValueEncoderTests {
    struct Line: Codable, Equatable {
        var id: String
        var quantity: Int
        var price: Price
        var note: String?
        var small: Int8
        var large: UInt64
        var ratio: Float
        var weight: Double
        var flags: [Bool]
    }

    struct Price: Codable, Equatable {
        var text: String
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(text)
        }
        init(text: String) { self.text = text }
        init(from decoder: any Decoder) throws { text = try decoder.singleValueContainer().decode(String.self) }
    }

    struct State: Codable, Equatable {
        var lines: [Line]
        var byName: [String: Int]
        var nested: [[Int]]
        var empty: [Line]
        var chosen: Line?
    }

    /// Writes members through a nested keyed container, a nested unkeyed one and a super encoder.
    struct Hand: Encodable {
        var a: Int
        var b: [String]
        enum Keys: String, CodingKey { case a, inner, list, base }
        enum InnerKeys: String, CodingKey { case x, y }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(a, forKey: .a)
            var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
            try inner.encode("x", forKey: .x)
            try inner.encodeNil(forKey: .y)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            for text in b { try list.encode(text) }
            var row = list.nestedContainer(keyedBy: InnerKeys.self)
            try row.encode(2, forKey: .x)
            var base = container.superEncoder(forKey: .base).container(keyedBy: InnerKeys.self)
            try base.encode(true, forKey: .y)
            try container.encode(a + 1, forKey: .a)  // the last write of a key wins
        }
    }

    @Test func encodesWhatFoundationWritesForRandomStates() throws {
        var generator = SeededRandom(seed: 1616)
        for _ in 0..<300 {
            let state = State.random(using: &generator)
            try expectFoundationsValue(state)
        }
    }

    @Test func nestedContainersAndSuperEncodersLandWhereFoundationPutsThem() throws {
        try expectFoundationsValue(Hand(a: 1, b: ["p", "q"]))
        try expectFoundationsValue([Hand(a: 3, b: [])])
    }

    private func expectFoundationsValue<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .throw
        let expected = try JSONValue(parsing: Array(try encoder.encode(value)))
        #expect(try JSONValueEncoder().encode(value) == expected)
    }
}

extension JSONValueEncoderTests.State {
    static func random(using generator: inout SeededRandom) -> Self {
        func line(_ generator: inout SeededRandom) -> JSONValueEncoderTests.Line {
            JSONValueEncoderTests.Line(
                id: "p-\(Int.random(in: 0...99, using: &generator))", quantity: Int.random(in: -5...50, using: &generator),
                price: .init(text: "\(Int.random(in: 0...999, using: &generator)).99"),
                note: Bool.random(using: &generator) ? nil : "n",
                small: Int8.random(in: .min ... .max, using: &generator), large: UInt64.random(in: 0...1 << 40, using: &generator),
                ratio: Float(Int.random(in: 0...8, using: &generator)) + 0.25, weight: Double(Int.random(in: -8...8, using: &generator)) + 0.5,
                flags: (0..<Int.random(in: 0...3, using: &generator)).map { _ in Bool.random(using: &generator) })
        }
        let lines = (0..<Int.random(in: 0...6, using: &generator)).map { _ in line(&generator) }
        var byName: [String: Int] = [:]
        for index in 0..<Int.random(in: 0...4, using: &generator) { byName["k\(index)"] = Int.random(in: 0...9, using: &generator) }
        return Self(
            lines: lines, byName: byName,
            nested: (0..<Int.random(in: 0...3, using: &generator)).map { _ in (0..<Int.random(in: 0...3, using: &generator)).map { $0 } },
            empty: [], chosen: Bool.random(using: &generator) ? line(&generator) : nil)
    }
}

/// Encoding with a memo of the previous encodings gives what encoding afresh gives.
@Suite struct EncodingMemoTests {
    @Test func encodingWithAMemoGivesTheFreshEncodingForASeriesOfEditedStates() throws {
        var generator = SeededRandom(seed: 1617)
        let memo = EncodingMemo()
        var state = JSONValueEncoderTests.State.random(using: &generator)
        for round in 0..<500 {
            // Mostly small edits of the previous state (a line changed, inserted, removed), sometimes a new one.
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: state = .random(using: &generator)
            case 1 where !state.lines.isEmpty: state.lines[Int.random(in: 0..<state.lines.count, using: &generator)].quantity += 1
            case 2 where !state.lines.isEmpty: state.lines.remove(at: Int.random(in: 0..<state.lines.count, using: &generator))
            case 3: state.lines.insert(JSONValueEncoderTests.State.random(using: &generator).chosen ?? state.lines.first ?? .init(
                id: "x", quantity: 1, price: .init(text: "1.00"), note: nil, small: 1, large: 2, ratio: 0.5, weight: 1.5, flags: []),
                at: Int.random(in: 0...state.lines.count, using: &generator))
            default: state.chosen = state.lines.last
            }
            let fresh = try JSONValueEncoder().encode(state)
            let reusing = try JSONValueEncoder().encode(state, reusing: memo)
            #expect(reusing == fresh, "round \(round)")
        }
    }

    @Test func elementsOfTypesThatAreNotEquatableAreEncodedEachTime() throws {
        struct Plain: Encodable { var n: Int }
        let memo = EncodingMemo()
        for n in 0..<3 {
            #expect(try JSONValueEncoder().encode([Plain(n: n), Plain(n: 1)], reusing: memo) == [["n": .integer(Int64(n))], ["n": 1]])
        }
    }
}
