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
        let encoder = ValueEncoder(codingPath: [])
        try value.encode(to: encoder)
        guard let node = encoder.node else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "\(T.self) encoded no value"))
        }
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
        case .object(let object): .object(object.members.mapValues(\.value))
        case .array(let array): .array(array.elements.map(\.value))
        }
    }
}

private final class ObjectNode {
    var members: [String: Node] = [:]
}

private final class ArrayNode {
    var elements: [Node] = []
}

private final class ValueEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var node: Node?

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: ObjectNode
        if case .object(let existing) = node {
            object = existing
        } else {
            object = ObjectNode()
            node = .object(object)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: ArrayNode
        if case .array(let existing) = node {
            array = existing
        } else {
            array = ArrayNode()
            node = .array(array)
        }
        return UnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }
}

/// Encodes one `Encodable` at `codingPath`, using the fast paths for JSON's own scalar types.
private func encodeNode<T: Encodable>(_ value: T, at codingPath: [any CodingKey]) throws -> Node {
    switch value {
    case let value as JSONValue: return .value(value)
    case let value as String: return .value(.string(value))
    case let value as Bool: return .value(.bool(value))
    case let value as Int: return .value(.integer(Int64(value)))
    case let value as Int64: return .value(.integer(value))
    case let value as Double: return .value(.double(value))
    case let value as Float: return .value(.double(Double(value)))
    case let value as any BinaryInteger:
        return .value(Int64(exactly: value).map { .integer($0) } ?? .double(Double(value)))
    default:
        let encoder = ValueEncoder(codingPath: codingPath)
        try value.encode(to: encoder)
        return encoder.node ?? .value(.object([:]))
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: ObjectNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { object.members[key.stringValue] = .value(.null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { object.members[key.stringValue] = .value(.bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) throws { object.members[key.stringValue] = .value(.string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { object.members[key.stringValue] = .value(.double(value)) }
    mutating func encode(_ value: Float, forKey key: Key) throws { object.members[key.stringValue] = .value(.double(Double(value))) }
    mutating func encode(_ value: Int, forKey key: Key) throws { object.members[key.stringValue] = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { object.members[key.stringValue] = .value(.integer(value)) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        object.members[key.stringValue] = try encodeNode(value, at: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectNode()
        object.members[key.stringValue] = .object(nested)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(object: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayNode()
        object.members[key.stringValue] = .array(nested)
        return UnkeyedContainer(array: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let encoder = ValueEncoder(codingPath: codingPath + [key])
        let nested = ObjectNode()
        encoder.node = .object(nested)
        object.members[key.stringValue] = .object(nested)
        return encoder
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
    let codingPath: [any CodingKey]
    var count: Int { array.elements.count }

    mutating func encodeNil() throws { array.elements.append(.value(.null)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        array.elements.append(try encodeNode(value, at: codingPath + [IndexKey(count)]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectNode()
        let path = codingPath + [IndexKey(count)]
        array.elements.append(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(object: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayNode()
        let path = codingPath + [IndexKey(count)]
        array.elements.append(.array(nested))
        return UnkeyedContainer(array: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = ValueEncoder(codingPath: codingPath + [IndexKey(count)])
        let nested = ObjectNode()
        encoder.node = .object(nested)
        array.elements.append(.object(nested))
        return encoder
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.node = .value(.null) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.node = try encodeNode(value, at: codingPath)
    }
}
