import JSON
import JSONPatch

/// The diff as it was before it was made linear (`JSONPatch.diff` compared each container for equality
/// before diffing its members, so deep parts were compared once per level above them): the reference the
/// faster one must agree with, operation for operation.
enum ReferenceDiff {
    /// The patch that turns `old` into `new`, made of `add`, `remove` and `replace` operations only.
    ///
    /// Objects are compared member by member (in sorted key order, so the result is deterministic).
    /// Arrays are compared after dropping their common prefix and suffix, so one inserted or removed
    /// element costs one operation; a rest that moved along (``ArrayShift``: a rolling window, a capped
    /// newest-first list) costs its edits at each end; any other rest is compared position by position. A container in which
    /// more than half of the members changed (and more than one) is replaced whole, which is shorter than
    /// many small edits.
    ///
    /// - Returns: a patch `p` with `p.apply(to: old) == new`; empty when they are equal.
    static func diff(from old: JSONValue, to new: JSONValue) -> JSONPatch {
        var operations = [JSONPatchOperation]()
        appendDiff(from: old, to: new, at: .root, into: &operations)
        return JSONPatch(operations)
    }

    private static func appendDiff(
        from old: JSONValue, to new: JSONValue, at path: JSONPointer, into operations: inout [JSONPatchOperation]
    ) {
        guard old != new else { return }
        var nested = [JSONPatchOperation]()
        let memberCount: Int
        let changedMembers: Int
        switch (old, new) {
        case (.object(let oldMembers), .object(let newMembers)):
            memberCount = max(oldMembers.count, newMembers.count)
            var changed = 0
            for key in oldMembers.keys.sorted() where newMembers[key] == nil {
                nested.append(.remove(path: path.appending(key)))
                changed += 1
            }
            for key in newMembers.keys.sorted() {
                if let oldValue = oldMembers[key] {
                    guard oldValue != newMembers[key]! else { continue }
                    appendDiff(from: oldValue, to: newMembers[key]!, at: path.appending(key), into: &nested)
                } else {
                    nested.append(.add(path: path.appending(key), value: newMembers[key]!))
                }
                changed += 1
            }
            changedMembers = changed
        case (.array(let oldElements), .array(let newElements)):
            memberCount = max(oldElements.count, newElements.count)
            changedMembers = appendArrayDiff(from: oldElements, to: newElements, at: path, into: &nested)
        default:
            operations.append(.replace(path: path, value: new))
            return
        }
        if changedMembers > 1, changedMembers * 2 > memberCount {
            operations.append(.replace(path: path, value: new))
        } else {
            operations.append(contentsOf: nested)
        }
    }

    /// Appends the edits of an array and returns how many of its positions they touch.
    private static func appendArrayDiff(
        from old: [JSONValue], to new: [JSONValue], at path: JSONPointer, into operations: inout [JSONPatchOperation]
    ) -> Int {
        var changed = 0
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix,
            old[old.count - 1 - suffix] == new[new.count - 1 - suffix]
        {
            suffix += 1
        }
        let oldMiddle = old.count - prefix - suffix
        let newMiddle = new.count - prefix - suffix
        let oldPart = old[prefix..<(prefix + oldMiddle)], newPart = new[prefix..<(prefix + newMiddle)]
        if let shift = ArrayShift.find(from: oldPart, to: newPart) {
            let edits = shift.operations(from: oldPart, to: newPart, at: path, start: prefix) { $0 }
            operations += edits
            return edits.count
        }
        let shared = min(oldMiddle, newMiddle)
        for offset in 0..<shared {
            let index = prefix + offset
            if old[index] != new[index] { changed += 1 }
            appendDiff(from: old[index], to: new[index], at: path.appending(index), into: &operations)
        }
        // Extra old elements go from the first index past the shared part; later ones shift down onto it.
        for _ in shared..<max(shared, oldMiddle) {
            operations.append(.remove(path: path.appending(prefix + shared)))
        }
        for offset in shared..<max(shared, newMiddle) {
            operations.append(.add(path: path.appending(prefix + offset), value: new[prefix + offset]))
        }
        return changed + abs(oldMiddle - newMiddle)
    }
}
