import JSON

/// A value that finds its own change as a patch, by comparing typed values, instead of having both JSON
/// forms built and diffed: the state of a ViewModel that changes often (the cart's, on every cart change),
/// where encoding the new state and walking both forms was most of a change's cost.
///
/// The patch must be the one ``JSONPatch/diff(from:to:)`` makes from `old`'s form to `self`'s, operation for
/// operation, so that clients see the same messages whichever path made them (conforming types test this on
/// random pairs of values). A type returns nil for the changes it leaves to that diff (rare ones: it need not
/// cover every change). The ViewModel binding sends the patch as it is, without building either form (debug
/// builds check it against both): a wrong patch would leave clients' mirrors apart from the state.
///
/// ```swift
/// if let patch = new.patch(from: old) {
///     send(patch)   // no form built, old or new
/// }
/// ```
public protocol JSONPatchDiffable: JSONValueConvertible {
    /// The patch that ``JSONPatch/diff(from:to:)`` makes from `old.jsonValue(reusing: nil)` to
    /// `self.jsonValue(reusing: nil)`, or nil to leave the change to that diff.
    func patch(from old: Self) -> JSONPatch?
}

/// The edits of one JSON object's members, gathered as ``JSONPatch/diff(from:to:)`` gathers them: the caller
/// visits the members in key order, and the object is replaced whole when more than half of its members
/// (and more than one) changed. For typed diffs (``JSONPatchDiffable``).
public struct ObjectEdits {
    /// Where the object is.
    public let path: JSONPointer
    /// How many members the object has.
    public let memberCount: Int
    /// The members' operations so far.
    public private(set) var operations: [JSONPatchOperation] = []
    /// How many members changed so far.
    public private(set) var changedMembers = 0

    /// Edits of the object at `path`, which has `memberCount` members before and after.
    public init(at path: JSONPointer, memberCount: Int) {
        self.path = path
        self.memberCount = memberCount
    }

    /// The member `key` is now `value`, a scalar or a value of another kind than before.
    public mutating func replace(_ key: String, with value: JSONValue) {
        operations.append(.replace(path: path.appending(key), value: value))
        changedMembers += 1
    }

    /// The member `key` changed with `operations` (the edits of an object or array under it).
    public mutating func nested(_ operations: [JSONPatchOperation]) {
        guard !operations.isEmpty else { return }
        self.operations += operations
        changedMembers += 1
    }

    /// Whether the diff replaces the object whole rather than taking these edits.
    public var replacesWhole: Bool {
        JSONPatch.replacesWhole(changed: changedMembers, of: memberCount)
    }
}

extension JSONPatch {
    /// The operations ``diff(from:to:)`` makes for an array of typed elements whose JSON forms are equal
    /// exactly when the elements are (`==`), an array that moved along (an ``ArrayShift``: a price ticker's
    /// history) included. `elementEdits` gives the edits of one element changed in place (at the path it
    /// is given), `form` an element's JSON form. Element operations are replaced by one replace of the whole
    /// array (`whole()`) when more than half of its elements changed, as the diff does.
    /// Inlinable, so that it is specialised for the caller's element type (its comparisons and the closures
    /// then run without generic dispatch, a few thousand instructions per cart change).
    @inlinable
    public static func arrayEdits<Element: Equatable>(
        from old: [Element], to new: [Element], at path: JSONPointer,
        elementEdits: (Element, Element, JSONPointer) -> [JSONPatchOperation],
        form: (Element) -> JSONValue, whole: () -> JSONValue
    ) -> [JSONPatchOperation] {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix, old[old.count - 1 - suffix] == new[new.count - 1 - suffix] {
            suffix += 1
        }
        let oldMiddle = old.count - prefix - suffix
        let newMiddle = new.count - prefix - suffix
        let oldPart = old[prefix..<(prefix + oldMiddle)], newPart = new[prefix..<(prefix + newMiddle)]
        if let shift = ArrayShift.find(from: oldPart, to: newPart) {
            let operations = shift.operations(from: oldPart, to: newPart, at: path, start: prefix, form: form)
            if replacesWhole(changed: operations.count, of: max(old.count, new.count)) { return [.replace(path: path, value: whole())] }
            return operations
        }
        // Counted before any edit is made: an array replaced whole (a cart filled at once, or emptied) makes
        // no element's edits or JSON form, only the whole's.
        let shared = min(oldMiddle, newMiddle)
        var changed = abs(oldMiddle - newMiddle)
        for index in prefix..<(prefix + shared) where old[index] != new[index] { changed += 1 }
        if replacesWhole(changed: changed, of: max(old.count, new.count)) { return [.replace(path: path, value: whole())] }
        var operations: [JSONPatchOperation] = []
        for index in prefix..<(prefix + shared) where old[index] != new[index] {
            operations += elementEdits(old[index], new[index], path.appending(index))
        }
        for _ in shared..<max(shared, oldMiddle) {
            operations.append(.remove(path: path.appending(prefix + shared)))
        }
        for offset in shared..<max(shared, newMiddle) {
            operations.append(.add(path: path.appending(prefix + offset), value: form(new[prefix + offset])))
        }
        return operations
    }
}
