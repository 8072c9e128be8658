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
            #expect(try patch.apply(to: old) == new, "old \(old) new \(new) patch \(patch.jsonValue)")
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
