import Randomness
import JSON
import JSONPatch
import Testing

@Suite struct JSONPatchTests {
    @Test func diffThenApplyReproducesTheTargetForRandomDocuments() throws {
        var generator = SeededRandom(seed: 42)
        for _ in 0..<2_000 {
            let old = JSONValue.random(depth: 4, using: &generator)
            let new = Bool.random(using: &generator) ? JSONValue.random(depth: 4, using: &generator) : mutate(old, &generator)
            let patch = JSONPatch.diff(from: old, to: new)
            let copy = old
            #expect(try patch.apply(to: old) == new, "old \(old) new \(new) patch \(patch.jsonValue)")
            #expect(old == copy)  // changed in place only once copied
            // The wire form reads back to the same patch.
            #expect(try JSONPatch(json: try JSONValue(parsing: patch.jsonValue.serialized())) == patch)
        }
    }

    @Test func diffGivesTheReferenceDiffsOperationsForRandomDocuments() {
        var generator = SeededRandom(seed: 16)
        for round in 0..<5_000 {
            let old = JSONValue.random(depth: 5, using: &generator)
            // Mostly small edits (several in a row), as state changes are; sometimes unrelated documents.
            var new = old
            if round % 5 == 0 {
                new = JSONValue.random(depth: 5, using: &generator)
            } else {
                for _ in 0..<Int.random(in: 0...3, using: &generator) { new = mutate(new, &generator) }
            }
            let patch = JSONPatch.diff(from: old, to: new)
            #expect(patch == ReferenceDiff.diff(from: old, to: new), "old \(old) new \(new)")
        }
    }

    /// `serialize(into:)` writes what serialising the patch's value writes, byte for byte.
    @Test func serializedPatchEqualsItsValueSerialized() throws {
        var generator = SeededRandom(seed: 6902)
        for _ in 0..<2_000 {
            let old = JSONValue.random(depth: 4, using: &generator)
            let patch = JSONPatch.diff(from: old, to: mutate(mutate(old, &generator), &generator))
            var direct: [UInt8] = []
            patch.serialize(into: &direct)
            var viaValue: [UInt8] = []
            patch.jsonValue.serialize(into: &viaValue)
            #expect(direct == viaValue)
        }
        let awkward = try JSONPointer("/a~1b/~0/\"q\"/\u{1}\n/é😀//0")
        let every = JSONPatch([
            .add(path: awkward, value: ["x": [1, nil, 2.5]]), .remove(path: .root),
            .replace(path: awkward, value: "~/"), .move(from: awkward, path: .root),
            .copy(from: .root, path: awkward), .test(path: awkward, value: false),
        ])
        var direct: [UInt8] = []
        every.serialize(into: &direct)
        var viaValue: [UInt8] = []
        every.jsonValue.serialize(into: &viaValue)
        #expect(String(decoding: direct, as: UTF8.self) == String(decoding: viaValue, as: UTF8.self))
    }

    @Test func equalDocumentsGiveAnEmptyPatch() {
        let document: JSONValue = ["a": [1, 2, ["b": nil]]]
        #expect(JSONPatch.diff(from: document, to: document).isEmpty)
    }

    @Test func oneChangedFieldInALongArrayIsOneSmallOperation() {
        let lines = (0..<100).map { index -> JSONValue in
            ["productId": .string("p-\(index)"), "quantity": 1, "name": .string("Product \(index)"), "unitPrice": "1.00", "lineTotal": "1.00"]
        }
        var changed = lines
        changed[37] = ["productId": "p-37", "quantity": 2, "name": "Product 37", "unitPrice": "1.00", "lineTotal": "2.00"]
        let patch = JSONPatch.diff(from: ["lines": .array(lines)], to: ["lines": .array(changed)])
        let expected: [JSONPatchOperation] = [
            .replace(path: JSONPointer(tokens: ["lines", "37", "lineTotal"]), value: "2.00"),
            .replace(path: JSONPointer(tokens: ["lines", "37", "quantity"]), value: 2),
        ]
        #expect(patch.operations == expected)
    }

    @Test func anInsertionInTheMiddleOfAnArrayIsOneAdd() throws {
        let patch = JSONPatch.diff(from: [1, 2, 3, 4], to: [1, 2, 9, 3, 4])
        #expect(patch.operations == [.add(path: try JSONPointer("/2"), value: 9)])
    }

    @Test func aRollingWindowThatMovedOnIsARemoveAtTheHeadAndAnAddAtTheEnd() throws {
        func point(_ index: Int) -> JSONValue { ["price": .string("\(index).00"), "stock": 3, "at": .string("t\(index)")] }
        let before: JSONValue = ["priceHistory": .array((0..<100).map(point))]
        let after: JSONValue = ["priceHistory": .array((1...100).map(point))]
        let patch = JSONPatch.diff(from: before, to: after)
        #expect(patch.operations == [
            .remove(path: try JSONPointer("/priceHistory/0")),
            .add(path: try JSONPointer("/priceHistory/99"), value: point(100)),
        ])
        // Three points at once (a coalesced burst) are three at each end.
        let later: JSONValue = ["priceHistory": .array((4...103).map(point))]
        #expect(JSONPatch.diff(from: after, to: later).operations.count == 6)
        #expect(try JSONPatch.diff(from: after, to: later).apply(to: after) == later)
    }

    @Test func aCappedNewestFirstListThatGainedOneIsAnAddAtTheHeadAndARemoveAtTheEnd() throws {
        let before: JSONValue = .array((0..<20).reversed().map { .string("n-\($0)") })
        let after: JSONValue = .array((1...20).reversed().map { .string("n-\($0)") })
        let patch = JSONPatch.diff(from: before, to: after)
        #expect(patch.operations == [.add(path: try JSONPointer("/0"), value: "n-20"), .remove(path: try JSONPointer("/20"))])
        #expect(try patch.apply(to: before) == after)
    }

    @Test func randomShiftsApplyAndCostNoMoreThanTheirEdits() throws {
        var generator = SeededRandom(seed: 6902)
        var made = 0
        /// Distinct elements, objects half the time: a shift is the only way two of them line up.
        func element(_ generator: inout SeededRandom) -> JSONValue {
            made += 1
            return Bool.random(using: &generator) ? .string("e\(made)") : ["id": .string("e\(made)"), "price": "1.00"]
        }
        for _ in 0..<1_000 {
            let old = (0..<Int.random(in: 2...30, using: &generator)).map { _ in element(&generator) }
            let head = Int.random(in: 1...4, using: &generator), tail = Int.random(in: 0...4, using: &generator)
            var new = old
            if Bool.random(using: &generator) {
                new.removeFirst(min(head, new.count))
                new += (0..<tail).map { _ in element(&generator) }
            } else {
                new.insert(contentsOf: (0..<head).map { _ in element(&generator) }, at: 0)
                new.removeLast(min(tail, new.count))
            }
            let patch = JSONPatch.diff(from: .array(old), to: .array(new))
            #expect(try patch.apply(to: .array(old)) == .array(new), "old \(old) new \(new) patch \(patch.jsonValue)")
            #expect(patch == ReferenceDiff.diff(from: .array(old), to: .array(new)))
            // A shift's edits, or the array replaced whole when they would outnumber what it keeps.
            #expect(patch.operations.count == 1 || patch.operations.count <= head + tail, "old \(old) new \(new)")
        }
    }

    @Test func appliesEveryOperationKind() throws {
        let patch = try JSONPatch(json: try JSONValue(parsing: """
            [{"op":"add","path":"/a/-","value":3},{"op":"remove","path":"/b"},
             {"op":"replace","path":"/c","value":{"d":1}},{"op":"move","from":"/c/d","path":"/e"},
             {"op":"copy","from":"/e","path":"/f"},{"op":"test","path":"/f","value":1.0},
             {"op":"add","path":"/x~1y","value":"slash"}]
            """))
        let result = try patch.apply(to: ["a": [1, 2], "b": true, "c": nil])
        #expect(result == ["a": [1, 2, 3], "c": [:], "e": 1, "f": 1, "x/y": "slash"])
    }

    @Test func failsOnMissingPathsAndFailedTests() throws {
        #expect(throws: JSONPatchError.pathNotFound("/nope")) {
            try JSONPatch([.remove(path: try JSONPointer("/nope"))]).apply(to: [:])
        }
        #expect(throws: JSONPatchError.pathNotFound("/a/01")) {
            try JSONPatch([.replace(path: try JSONPointer("/a/01"), value: 1)]).apply(to: ["a": [0, 1]])
        }
        // A replace needs its target (member, in-range index; not "-").
        for (path, document) in [("/nope", [:] as JSONValue), ("/a/2", ["a": [0, 1]]), ("/a/-", ["a": [0, 1]]), ("/a/b", ["a": 1])] {
            #expect(throws: JSONPatchError.pathNotFound(path)) {
                try JSONPatch([.replace(path: try JSONPointer(path), value: 1)]).apply(to: document)
            }
        }
        #expect(throws: JSONPatchError.testFailed("/a")) {
            try JSONPatch([.test(path: try JSONPointer("/a"), value: 2)]).apply(to: ["a": 1])
        }
        #expect(throws: JSONPatchError.invalidPointer("a")) { try JSONPointer("a") }
    }

    @Test func pointersEscapeTildeAndSlash() throws {
        let pointer = JSONPointer(tokens: ["a/b", "c~d", ""])
        #expect(pointer.description == "/a~1b/c~0d/")
        #expect(try JSONPointer(pointer.description) == pointer)
    }

    /// A small edit of `value`: one member or element changed, added or removed somewhere inside.
    private func mutate(_ value: JSONValue, _ generator: inout SeededRandom) -> JSONValue {
        switch value {
        case .object(var members):
            if let key = members.keys.sorted().randomElement(using: &generator), Bool.random(using: &generator) {
                members[key] = mutate(members[key]!, &generator)
            } else {
                members["new"] = .random(depth: 1, using: &generator)
            }
            return .object(members)
        case .array(var elements):
            switch Int.random(in: 0..<3, using: &generator) {
            case 0 where !elements.isEmpty:
                let index = Int.random(in: 0..<elements.count, using: &generator)
                elements[index] = mutate(elements[index], &generator)
            case 1 where !elements.isEmpty:
                elements.remove(at: Int.random(in: 0..<elements.count, using: &generator))
            default:
                elements.insert(.random(depth: 1, using: &generator), at: Int.random(in: 0...elements.count, using: &generator))
            }
            return .array(elements)
        default:
            return .random(depth: 1, using: &generator)
        }
    }
}
