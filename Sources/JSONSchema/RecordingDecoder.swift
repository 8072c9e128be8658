/// A decoder that hands back placeholders and writes down what was asked into a ``SchemaNode``.
struct RecordingDecoder: Decoder {
    let node: SchemaNode
    let recording: Recording
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if case .unknown = node.kind { node.kind = .object([]) }
        return KeyedDecodingContainer(RecordingKeyedContainer<Key>(node: node, recording: recording, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw SchemaGenerationError(description: "\(codingPath.map(\.stringValue)): an unkeyed container outside an array is not supported")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        RecordingSingleValueContainer(node: node, recording: recording, codingPath: codingPath)
    }
}

/// The single value of a ``RecordingDecoder``: asking about `null` makes the value nullable.
struct RecordingSingleValueContainer: SingleValueDecodingContainer {
    let node: SchemaNode
    let recording: Recording
    var codingPath: [any CodingKey]

    func decodeNil() -> Bool {
        node.isNullable = true
        return false
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try recording.decode(type, into: node)
    }

    func decode(_ type: Bool.Type) throws -> Bool { try recording.decode(type, into: node) }
    func decode(_ type: String.Type) throws -> String { try recording.decode(type, into: node) }
    func decode(_ type: Double.Type) throws -> Double { try recording.decode(type, into: node) }
    func decode(_ type: Float.Type) throws -> Float { try recording.decode(type, into: node) }
    func decode(_ type: Int.Type) throws -> Int { try recording.decode(type, into: node) }
    func decode(_ type: Int8.Type) throws -> Int8 { try recording.decode(type, into: node) }
    func decode(_ type: Int16.Type) throws -> Int16 { try recording.decode(type, into: node) }
    func decode(_ type: Int32.Type) throws -> Int32 { try recording.decode(type, into: node) }
    func decode(_ type: Int64.Type) throws -> Int64 { try recording.decode(type, into: node) }
    func decode(_ type: UInt.Type) throws -> UInt { try recording.decode(type, into: node) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try recording.decode(type, into: node) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try recording.decode(type, into: node) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try recording.decode(type, into: node) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try recording.decode(type, into: node) }
}

/// The members of an object in a ``RecordingDecoder``: `decode` records a required member,
/// `decodeIfPresent` an optional one unless its value asks about `null` (then it is present and nullable).
struct RecordingKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let node: SchemaNode
    let recording: Recording
    var codingPath: [any CodingKey]

    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool {
        node.member(key.stringValue).isNullable = true
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try recording.decode(type, into: node.member(key.stringValue))
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try recording.decode(type, into: node.member(key.stringValue)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try recording.decode(type, into: node.member(key.stringValue)) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let member = node.member(key.stringValue)
        let value = try recording.decode(type, into: member)
        if !member.isNullable { node.markOptional(key.stringValue) }
        return value
    }

    // The standard library's defaults for these go through `contains` and `decodeNil`, which would record
    // an optional member as a nullable one.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }

    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        try decodeIfPresent(type, forKey: key) as T?
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let member = node.member(key.stringValue)
        if case .unknown = member.kind { member.kind = .object([]) }
        return KeyedDecodingContainer(RecordingKeyedContainer<NestedKey>(
            node: member, recording: recording, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw SchemaGenerationError(description: "\(key.stringValue): a nested unkeyed container is not supported")
    }

    func superDecoder() throws -> any Decoder {
        RecordingDecoder(node: node, recording: recording, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        RecordingDecoder(node: node.member(key.stringValue), recording: recording, codingPath: codingPath + [key])
    }
}
