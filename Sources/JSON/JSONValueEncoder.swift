/// Encodes `Encodable` values into ``JSONValue`` (not into bytes): ViewModel state snapshots and
/// method results become values that can be diffed, patched and then serialised by jansson.
public struct JSONValueEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// Encodes `value`.
    ///
    /// - Throws: `EncodingError.invalidValue` when the value encodes nothing at the top level.
    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        if let value = value as? JSONValue { return value }
        if let convertible = value as? any JSONValueConvertible { return convertible.jsonValue(reusing: nil) }
        let encoder = ValueEncoder(parent: nil, key: nil)
        try value.encode(to: encoder)
        guard let node = encoder.node else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "\(T.self) encoded no value"))
        }
        return node.value
    }

    /// Encodes `value`, reusing the encodings of array elements equal to those of the previous value
    /// encoded with `memo` (see ``EncodingMemo``); the result is the same as ``encode(_:)``'s.
    ///
    /// - Throws: `EncodingError.invalidValue` when the value encodes nothing at the top level.
    public func encode<T: Encodable>(_ value: T, reusing memo: EncodingMemo) throws -> JSONValue {
        if let convertible = value as? any JSONValueConvertible {
            let encoded = convertible.jsonValue(reusing: memo)
            memo.finish()
            return encoded
        }
        let encoder = ValueEncoder(parent: nil, key: nil, memo: memo)
        do {
            try value.encode(to: encoder)
        } catch {
            memo.reset()
            throw error
        }
        guard let node = encoder.node else {
            memo.reset()
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "\(T.self) encoded no value"))
        }
        memo.finish()
        return node.value
    }
}

/// A value under construction: containers hold references so that nested containers can keep writing
/// into their parent after it was handed out.
private enum Node {
    case value(JSONValue)
    case object(ObjectNode)
    case array(ArrayNode)

    var value: JSONValue {
        switch self {
        case .value(let value): value
        case .object(let object): object.value
        case .array(let array): array.value
        }
    }
}

/// An object's members: finished values kept as `JSONValue` (no second pass over them), and the rare
/// nested containers, still open to writes, apart until the end.
private final class ObjectNode {
    var members: [String: JSONValue] = [:]
    var nested: [String: Node] = [:]

    func set(_ value: JSONValue, forKey key: String) {
        members[key] = value
        if !nested.isEmpty { nested[key] = nil }
    }

    func setNested(_ node: Node, forKey key: String) {
        nested[key] = node
        members[key] = nil
    }

    var value: JSONValue {
        guard !nested.isEmpty else { return .object(members) }
        var all = members
        for (key, node) in nested { all[key] = node.value }
        return .object(all)
    }
}

/// An array's elements; a nested container's slot holds `null` until the end.
private final class ArrayNode {
    var elements: [JSONValue] = []
    var nested: [(index: Int, node: Node)] = []

    func appendNested(_ node: Node) {
        nested.append((elements.count, node))
        elements.append(.null)
    }

    var value: JSONValue {
        guard !nested.isEmpty else { return .array(elements) }
        var all = elements
        for (index, node) in nested { all[index] = node.value }
        return .array(all)
    }
}

/// The encoder of one value. Its coding path is kept as a link to its parent and its own key, and built
/// only when asked for (by an error or a type that reads it): most values never need it.
private final class ValueEncoder: Encoder {
    let parent: ValueEncoder?
    let key: (any CodingKey)?
    /// The encodings of the previous value's array elements, when reusing them.
    let memo: EncodingMemo?
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var node: Node?

    init(parent: ValueEncoder?, key: (any CodingKey)?, memo: EncodingMemo? = nil) {
        self.parent = parent
        self.key = key
        self.memo = memo ?? parent?.memo
    }

    var codingPath: [any CodingKey] {
        var path = parent?.codingPath ?? []
        if let key { path.append(key) }
        return path
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: ObjectNode
        if case .object(let existing) = node {
            object = existing
        } else {
            object = ObjectNode()
            node = .object(object)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(object: object, encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: ArrayNode
        if case .array(let existing) = node {
            array = existing
        } else {
            array = ArrayNode()
            node = .array(array)
        }
        return UnkeyedContainer(array: array, encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }
}

/// Encodes one value below `parent` at `key`.
private func encodeValue<T: Encodable>(_ value: T, parent: ValueEncoder, key: any CodingKey) throws -> JSONValue {
    if let leaf = leafValue(value) { return leaf }
    let encoder = ValueEncoder(parent: parent, key: key)
    try value.encode(to: encoder)
    return encoder.node?.value ?? .object([:])
}

/// The value of a leaf type (strings, numbers, booleans, `JSONValue`), or nil for any other type. Told
/// apart by comparing metatypes (a pointer comparison), not by dynamic casts, which cost a conformance
/// lookup each time a struct is tried against them.
@inline(__always)
private func leafValue<T: Encodable>(_ value: T) -> JSONValue? {
    if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
    if T.self == Int.self { return .integer(Int64(unsafeBitCast(value, to: Int.self))) }
    if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
    if T.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
    if T.self == Int64.self { return .integer(unsafeBitCast(value, to: Int64.self)) }
    if T.self == JSONValue.self { return unsafeBitCast(value, to: JSONValue.self) }
    return otherLeafValue(value)
}

/// The integer types besides `Int` and `Int64`.
private let otherIntegerTypes: [ObjectIdentifier] = [
    Int8.self, Int16.self, Int32.self, UInt8.self, UInt16.self, UInt32.self, UInt64.self, UInt.self,
].map { ObjectIdentifier($0) }

/// The less common leaf types (`Float`, other integer widths), which encode themselves into a single
/// value container and would otherwise come back here.
private func otherLeafValue<T: Encodable>(_ value: T) -> JSONValue? {
    if T.self == Float.self { return .double(Double(unsafeBitCast(value, to: Float.self))) }
    guard otherIntegerTypes.contains(ObjectIdentifier(T.self)), let integer = value as? any BinaryInteger else { return nil }
    return Int64(exactly: integer).map { .integer($0) } ?? .double(Double(integer))
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: ObjectNode
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) throws { object.set(.null, forKey: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { object.set(.bool(value), forKey: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) throws { object.set(.string(value), forKey: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) throws { object.set(.double(value), forKey: key.stringValue) }
    mutating func encode(_ value: Float, forKey key: Key) throws { object.set(.double(Double(value)), forKey: key.stringValue) }
    mutating func encode(_ value: Int, forKey key: Key) throws { object.set(.integer(Int64(value)), forKey: key.stringValue) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { object.set(.integer(value), forKey: key.stringValue) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        object.set(try encodeValue(value, parent: encoder, key: key), forKey: key.stringValue)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectNode()
        object.setNested(.object(nested), forKey: key.stringValue)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(object: nested, encoder: ValueEncoder(parent: encoder, key: key)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayNode()
        object.setNested(.array(nested), forKey: key.stringValue)
        return UnkeyedContainer(array: nested, encoder: ValueEncoder(parent: encoder, key: key))
    }

    mutating func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let superEncoder = ValueEncoder(parent: encoder, key: key)
        let nested = ObjectNode()
        superEncoder.node = .object(nested)
        object.setNested(.object(nested), forKey: key.stringValue)
        return superEncoder
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String { "\(intValue!)" }
    var intValue: Int?
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let array: ArrayNode
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { array.elements.count }

    mutating func encodeNil() throws { array.elements.append(.null) }
    mutating func encode(_ value: String) throws { array.elements.append(.string(value)) }
    mutating func encode(_ value: Bool) throws { array.elements.append(.bool(value)) }
    mutating func encode(_ value: Int) throws { array.elements.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { array.elements.append(.integer(value)) }
    mutating func encode(_ value: Double) throws { array.elements.append(.double(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        if let leaf = leafValue(value) {
            array.elements.append(leaf)
        } else if let memo = encoder.memo {
            if let reused = memo.reuse(value) {
                array.elements.append(reused)
            } else {
                let encoded = try encodeValue(value, parent: encoder, key: IndexKey(count))
                memo.record(value, encoded)
                array.elements.append(encoded)
            }
        } else {
            array.elements.append(try encodeValue(value, parent: encoder, key: IndexKey(count)))
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectNode()
        let nestedEncoder = ValueEncoder(parent: encoder, key: IndexKey(count))
        array.appendNested(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(object: nested, encoder: nestedEncoder))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayNode()
        let nestedEncoder = ValueEncoder(parent: encoder, key: IndexKey(count))
        array.appendNested(.array(nested))
        return UnkeyedContainer(array: nested, encoder: nestedEncoder)
    }

    mutating func superEncoder() -> any Encoder {
        let superEncoder = ValueEncoder(parent: encoder, key: IndexKey(count))
        let nested = ObjectNode()
        superEncoder.node = .object(nested)
        array.appendNested(.object(nested))
        return superEncoder
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.node = .value(.null) }
    mutating func encode(_ value: String) throws { encoder.node = .value(.string(value)) }
    mutating func encode(_ value: Bool) throws { encoder.node = .value(.bool(value)) }
    mutating func encode(_ value: Int) throws { encoder.node = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { encoder.node = .value(.integer(value)) }
    mutating func encode(_ value: Double) throws { encoder.node = .value(.double(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        if let leaf = leafValue(value) {
            encoder.node = .value(leaf)
            return
        }
        // Below this encoder's own parent and key: a wrapper (such as a property wrapper) encoding its
        // value in a single value container adds no level to the coding path.
        let inner = ValueEncoder(parent: encoder.parent, key: encoder.key, memo: encoder.memo)
        try value.encode(to: inner)
        encoder.node = inner.node ?? .value(.object([:]))
    }
}
