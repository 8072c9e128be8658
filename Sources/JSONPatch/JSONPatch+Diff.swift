import JSON

extension JSONPatch {
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
    public static func diff(from old: JSONValue, to new: JSONValue) -> JSONPatch {
        var operations = [JSONPatchOperation]()
        appendDiff(from: old, to: new, at: .root, into: &operations)
        return JSONPatch(operations)
    }

    /// Appends the operations that turn `old` into `new` at `path`; returns whether they differ.
    ///
    /// Each part of the two documents is compared once: a container's members are diffed straight away
    /// (their operations kept aside until it is known whether the container is replaced whole), instead
    /// of being compared for equality first and then again by the diff below them, which made the work
    /// grow with the depth of the document.
    @discardableResult
    private static func appendDiff(
        from old: JSONValue, to new: JSONValue, at path: JSONPointer, into operations: inout [JSONPatchOperation]
    ) -> Bool {
        var nested = [JSONPatchOperation]()
        let memberCount: Int
        let changedMembers: Int
        switch (old, new) {
        case (.object(let oldMembers), .object(let newMembers)):
            memberCount = max(oldMembers.count, newMembers.count)
            var changed = 0
            // Each member is looked up once, in the old object: the new one is walked as sorted pairs, and
            // old members are missing from it exactly when fewer new ones were found in the old object
            // than it has. Removals come first in the operations.
            var found = 0
            for (key, newValue) in newMembers.sorted(by: { $0.key < $1.key }) {
                if let oldValue = oldMembers[key] {
                    found += 1
                    if areContainersOfOneKind(oldValue, newValue) {
                        guard appendDiff(from: oldValue, to: newValue, at: path.appending(key), into: &nested) else { continue }
                    } else {
                        guard oldValue != newValue else { continue }
                        nested.append(.replace(path: path.appending(key), value: newValue))
                    }
                } else {
                    nested.append(.add(path: path.appending(key), value: newValue))
                }
                changed += 1
            }
            if found < oldMembers.count {
                var removals = [JSONPatchOperation]()
                for key in oldMembers.keys.sorted() where newMembers[key] == nil {
                    removals.append(.remove(path: path.appending(key)))
                    changed += 1
                }
                nested.insert(contentsOf: removals, at: 0)
            }
            changedMembers = changed
        case (.array(let oldElements), .array(let newElements)):
            memberCount = max(oldElements.count, newElements.count)
            changedMembers = appendArrayDiff(from: oldElements, to: newElements, at: path, into: &nested)
        default:
            guard old != new else { return false }
            operations.append(.replace(path: path, value: new))
            return true
        }
        guard changedMembers > 0 else { return false }
        if replacesWhole(changed: changedMembers, of: memberCount) {
            operations.append(.replace(path: path, value: new))
        } else {
            operations.append(contentsOf: nested)
        }
        return true
    }

    /// Whether the diff replaces a container of `memberCount` members or elements whole when `changed` of them
    /// changed: more than half of them, and more than one (one replace is then shorter than the edits).
    public static func replacesWhole(changed: Int, of memberCount: Int) -> Bool {
        changed > 1 && changed * 2 > memberCount
    }

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
            if areContainersOfOneKind(old[index], new[index]) {
                if appendDiff(from: old[index], to: new[index], at: path.appending(index), into: &operations) { changed += 1 }
            } else if old[index] != new[index] {
                operations.append(.replace(path: path.appending(index), value: new[index]))
                changed += 1
            }
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

    /// Whether both are objects or both arrays: the pairs diffed member by member. Any other pair is
    /// equal or replaced, which is decided without building the path below.
    @inline(__always)
    private static func areContainersOfOneKind(_ old: JSONValue, _ new: JSONValue) -> Bool {
        switch (old, new) {
        case (.object, .object), (.array, .array): true
        default: false
        }
    }
}
