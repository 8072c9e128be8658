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
        memo(for: T.self)?.reuse(value)
    }

    /// Records the encoding of an element that could not be reused.
    func record<T>(_ value: T, _ encoded: JSONValue) {
        memo(for: T.self)?.record(value, encoded)
    }

    /// Ends an encoding: what it recorded is what the next one may reuse.
    func finish() {
        for entry in entries.values { entry.finish() }
    }

    /// Forgets everything (after an encoding that failed half-way).
    func reset() {
        entries = [:]
    }

    /// The memo of one `Equatable` element type, for values that build their own forms
    /// (``JSONValueConvertible``): typed, so no cast per element.
    @usableFromInline
    func elements<E: Equatable>(of type: E.Type) -> ElementMemo<E> {
        let id = ObjectIdentifier(type)
        if let entry = entries[id] { return unsafeDowncast(entry, to: ElementMemo<E>.self) }
        let memo = ElementMemo<E>()
        entries[id] = memo
        return memo
    }

    private func memo<T>(for type: T.Type) -> AnyElementMemo? {
        let id = ObjectIdentifier(type)
        if let entry = entries[id] { return entry }
        guard !notEquatable.contains(id) else { return nil }
        guard let equatable = type as? any Equatable.Type else {
            notEquatable.insert(id)
            return nil
        }
        func make<E: Equatable>(_: E.Type) -> AnyElementMemo { elements(of: E.self) }
        return make(equatable)
    }
}

/// What ``EncodingMemo`` keeps of one element type. Its methods are called with values of that type
/// only (the memo is found by the type's identifier), so `T` is `E` in ``ElementMemo``.
@usableFromInline
class AnyElementMemo {
    func reuse<T>(_ value: T) -> JSONValue? { nil }
    func record<T>(_ value: T, _ encoded: JSONValue) {}
    func finish() {}
}

/// What ``EncodingMemo`` keeps of one `Equatable` element type: the previous encoding's elements and forms.
///
/// Its typed methods are inlinable so that a hand-built form (``JSONValue/array(_:reusing:_:)``) gets them
/// specialised for its element type in its own module: unspecialised, each comparison went through witness
/// tables and metadata lookups that cost several times the comparison.
@usableFromInline
final class ElementMemo<E: Equatable>: AnyElementMemo {
    /// The previous encoding's elements of this type and their encodings, in order.
    @usableFromInline var previousValues: [E] = []
    @usableFromInline var previousEncoded: [JSONValue] = []
    /// This encoding's so far.
    @usableFromInline var values: [E] = []
    @usableFromInline var encoded: [JSONValue] = []

    @usableFromInline override init() {}

    override func reuse<T>(_ value: T) -> JSONValue? {
        reuse(element: unsafeBitCast(value, to: E.self))
    }

    /// The previous encoding of an element equal to `value` near its position, recorded as this
    /// encoding's next; nil when there is none (the caller encodes it and calls ``record(element:_:)``).
    @inlinable
    func reuse(element value: E) -> JSONValue? {
        let position = values.count
        func matches(_ candidate: Int) -> Bool {
            candidate >= 0 && candidate < previousValues.count && previousValues[candidate] == value
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
        let reused = previousEncoded[found]
        values.append(value)
        encoded.append(reused)
        return reused
    }

    override func record<T>(_ value: T, _ encoding: JSONValue) {
        record(element: unsafeBitCast(value, to: E.self), encoding)
    }

    /// Records the encoding of an element that could not be reused.
    @inlinable
    func record(element value: E, _ encoding: JSONValue) {
        values.append(value)
        encoded.append(encoding)
    }

    override func finish() {
        swap(&previousValues, &values)
        swap(&previousEncoded, &encoded)
        values.removeAll(keepingCapacity: true)
        encoded.removeAll(keepingCapacity: true)
    }
}
