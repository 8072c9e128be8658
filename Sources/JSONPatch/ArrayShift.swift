import JSON

/// An array that moved along rather than changed: a few elements dropped from its head with new ones
/// appended (a rolling window such as the last 100 prices), or a few inserted at its head with the oldest
/// dropped from its end (a newest-first list of fixed length).
///
/// Compared position by position, every element of a shifted array differs from the one it replaced, so
/// the diff would replace the whole array; as a shift it is `count` edits at the head and as many at the
/// end. The diff uses it for the part of two arrays left between their common prefix and suffix.
@usableFromInline
package enum ArrayShift: Equatable {
    /// The first `count` old elements were removed; the old ones left are the new array's first ones,
    /// and the new array's remaining elements were appended after them.
    case droppedHead(count: Int)
    /// `count` new elements were inserted at the head; the old elements follow them, and the old
    /// array's elements past the new array's end were removed.
    case insertedHead(count: Int)

    /// The largest head change looked for (a price ticker's burst of three market ticks is 30 points): a
    /// longer one is rarely a shift, and each candidate costs at least one comparison.
    @usableFromInline
    package static let longest = 32

    /// The shift that turns `old` into `new` when one of at most ``longest`` elements exists and the
    /// elements it keeps outnumber the ones it edits (otherwise comparing positions is as short).
    /// `old` and `new` differ in their first elements (the common prefix has been dropped).
    /// Generic over the element, so that a typed diff (``JSONPatchDiffable``) decides as the JSON diff does.
    @inlinable
    package static func find<Element: Equatable>(from old: ArraySlice<Element>, to new: ArraySlice<Element>) -> ArrayShift? {
        guard old.count >= 2, new.count >= 2 else { return nil }
        for count in 1...min(longest, old.count - 1) where old.count - count <= new.count {
            let kept = old.count - count
            guard kept > count + (new.count - kept) else { break }
            if old[(old.startIndex + count)...].elementsEqual(new.prefix(kept)) { return .droppedHead(count: count) }
        }
        for count in 1...min(longest, new.count - 1) where new.count - count <= old.count {
            let kept = new.count - count
            guard kept > count + (old.count - kept) else { break }
            if new[(new.startIndex + count)...].elementsEqual(old.prefix(kept)) { return .insertedHead(count: count) }
        }
        return nil
    }

    /// The operations of this shift for the elements of `old` and `new` at `start...` under `path`, `form`
    /// building the form of each element added (`{ $0 }` for JSON values; a typed diff, ``JSONPatchDiffable``,
    /// gets the JSON diff's operations for its elements' forms). Each operation touches one position.
    @inlinable
    package func operations<Element>(
        from old: ArraySlice<Element>, to new: ArraySlice<Element>, at path: JSONPointer, start: Int,
        form: (Element) -> JSONValue
    ) -> [JSONPatchOperation] {
        var operations = [JSONPatchOperation]()
        switch self {
        case .droppedHead(let count):
            let kept = old.count - count
            operations += repeatElement(.remove(path: path.appending(start)), count: count)
            for offset in kept..<new.count {
                operations.append(.add(path: path.appending(start + offset), value: form(new[new.startIndex + offset])))
            }
        case .insertedHead(let count):
            let kept = new.count - count
            for offset in 0..<count {
                operations.append(.add(path: path.appending(start + offset), value: form(new[new.startIndex + offset])))
            }
            operations += repeatElement(.remove(path: path.appending(start + new.count)), count: old.count - kept)
        }
        return operations
    }
}
