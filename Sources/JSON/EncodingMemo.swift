/// The encodings of the array elements of one value's previous encoding, for ``JSONValueEncoder`` to
/// reuse for the elements that are equal to one of them this time.
///
/// A ViewModel's state is encoded after each of its changes, and most of it is what it was: a cart change
/// alters one line of twenty. Comparing a line with its previous value (`==` of its `Equatable` type) is
/// much cheaper than encoding it again, and the reused encoding shares its storage with the previous
/// state's, which the diff then finds equal at once.
///
/// Elements are matched per type, in the order they are encoded: the k-th element of a type is compared
/// with the previous encoding's k-th of that type and its neighbours (an insertion or removal shifts the
/// rest by one), never searched for further. Only elements of `Equatable` types are reused, and only when
/// their `==` agrees with their encoding (equal values encode equally), as synthesized conformances do.
///
/// One memo serves one value encoded again and again; it is not thread-safe.
public final class EncodingMemo {
    private var entries: [ObjectIdentifier: AnyElementMemo] = [:]
    private var notEquatable: Set<ObjectIdentifier> = []

    /// An empty memo: the first encoding with it reuses nothing.
    public init() {}

    /// The previous encoding of an element equal to `value`, recorded as this encoding's next element
    /// of its type; nil when there is none (the caller encodes it and calls ``record(_:_:)``).
    func reuse<T>(_ value: T) -> JSONValue? {
        guard let memo = memo(for: T.self) else { return nil }
        return memo.reuse(value)
    }

    /// Records the encoding of an element that could not be reused.
    func record<T>(_ value: T, _ encoded: JSONValue) {
        guard let memo = memo(for: T.self) else { return }
        memo.current.append((value, encoded))
    }

    /// Ends an encoding: what it recorded is what the next one may reuse.
    func finish() {
        for entry in entries.values { entry.finish() }
    }

    /// Forgets everything (after an encoding that failed half-way).
    func reset() {
        entries = [:]
    }

    private func memo<T>(for type: T.Type) -> ElementMemo<T>? {
        let id = ObjectIdentifier(type)
        if let entry = entries[id] { return unsafeDowncast(entry, to: ElementMemo<T>.self) }
        guard !notEquatable.contains(id) else { return nil }
        guard let equatable = type as? any Equatable.Type else {
            notEquatable.insert(id)
            return nil
        }
        func equality<E: Equatable>(_: E.Type) -> (T, T) -> Bool {
            { ($0 as! E) == ($1 as! E) }
        }
        let memo = ElementMemo<T>(equal: equality(equatable))
        entries[id] = memo
        return memo
    }
}

/// What ``EncodingMemo`` keeps of one element type.
private class AnyElementMemo {
    func finish() {}
}

private final class ElementMemo<T>: AnyElementMemo {
    let equal: (T, T) -> Bool
    /// The previous encoding's elements of this type, in order.
    var previous: [(value: T, encoded: JSONValue)] = []
    /// This encoding's so far.
    var current: [(value: T, encoded: JSONValue)] = []

    init(equal: @escaping (T, T) -> Bool) {
        self.equal = equal
    }

    func reuse(_ value: T) -> JSONValue? {
        let position = current.count
        func matches(_ candidate: Int) -> Bool {
            previous.indices.contains(candidate) && equal(previous[candidate].value, value)
        }
        let found: Int
        if matches(position) {
            found = position
        } else if matches(position - 1) {
            found = position - 1
        } else if matches(position + 1) {
            found = position + 1
        } else if matches(position - 2) {
            found = position - 2
        } else if matches(position + 2) {
            found = position + 2
        } else {
            return nil
        }
        let encoded = previous[found].encoded
        current.append((value, encoded))
        return encoded
    }

    override func finish() {
        previous = current
        current = []
        current.reserveCapacity(previous.count)
    }
}
