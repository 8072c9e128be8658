import JSON
import JSONPatch
import Randomness
import Testing

/// Walks `steps` random edits of a state's wire value from `start` (`edited` makes each from the one before):
/// each patch the state makes itself (`JSONPatchDiffable`) must be `JSONPatch.diff`'s of the two JSON forms,
/// operation for operation, and applied to the old form give the new one.
/// - Returns: how many of the steps the state patched itself (the others it left to the diff).
func walkOwnPatches<State: JSONPatchDiffable & Decodable>(
    of type: State.Type, from start: JSONValue, steps: Int, _ random: inout SeededRandom,
    edited: (JSONValue, inout SeededRandom) -> JSONValue,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> Int {
    var wire = start
    var old = try JSONValueDecoder().decode(State.self, from: wire)
    var made = 0
    for _ in 0..<steps {
        wire = edited(wire, &random)
        let new = try JSONValueDecoder().decode(State.self, from: wire)
        defer { old = new }
        guard let patch = new.patch(from: old) else { continue }
        made += 1
        let oldForm = old.jsonValue(reusing: nil), newForm = new.jsonValue(reusing: nil)
        #expect(patch == JSONPatch.diff(from: oldForm, to: newForm), sourceLocation: sourceLocation)
        #expect(try patch.apply(to: oldForm) == newForm, sourceLocation: sourceLocation)
    }
    return made
}
