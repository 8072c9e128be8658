/// Decodes `Decodable` values from a ``JSONValue``: request parameters become typed structs, and a
/// mismatch becomes a `DecodingError` whose coding path names the offending parameter.
///
/// Numbers are strict: an integer type accepts only numbers that are whole and in range
/// (`2.0` is accepted as `2`; `2.5` and `1e30` are not).
///
/// Strings are refused if they hold U+0000 (`"a\u0000b"` is valid JSON). What this decoder makes goes on to
/// C interfaces that end text at its first NUL (SQLite's, when a statement binds a Swift string), so a
/// value holding one would be stored or looked up as its prefix: two idempotency keys differing only after
/// a NUL would be one key. A `JSONValue` member is taken as it is. (`ExactText`, in the binding, waives this
/// refusal for passwords, which are hashed from their bytes: a new refusal of strings must be added there too.)
public struct JSONValueDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// Decodes a `T` from `value`.
    ///
    /// - Throws: `DecodingError` with the coding path of the first member that does not fit.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try decodeValue(type, from: value, at: [])
    }
}

private func decodeValue<T: Decodable>(_ type: T.Type, from value: JSONValue, at codingPath: [any CodingKey]) throws -> T {
    if T.self == JSONValue.self { return value as! T }
    if T.self == String.self { return try string(from: value, at: codingPath) as! T }
    return try T(from: ValueDecoder(value: value, codingPath: codingPath))
}

private func mismatch(_ type: Any.Type, _ value: JSONValue, _ codingPath: [any CodingKey]) -> DecodingError {
    .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(describe(type)), found \(value.typeName)"))
}

private func describe(_ type: Any.Type) -> String {
    switch type {
    case is String.Type: "a string"
    case is Bool.Type: "a boolean"
    case is any BinaryInteger.Type: "an integer"
    case is any BinaryFloatingPoint.Type: "a number"
    default: "\(type)"
    }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw DecodingError.typeMismatch(
                [String: JSONValue].self,
                .init(codingPath: codingPath, debugDescription: "expected an object, found \(value.typeName)"))
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw DecodingError.typeMismatch(
                [JSONValue].self,
                .init(codingPath: codingPath, debugDescription: "expected an array, found \(value.typeName)"))
        }
        return UnkeyedContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(value: value, codingPath: codingPath)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "missing required member \"\(key.stringValue)\""))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).isNull }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeValue(type, from: try member(key), at: codingPath + [key])
    }

    // The members requests carry most, read in place: the generic path builds the member's coding path, a
    // decoder and a container for it, most of the cost of decoding a request's parameters. Results and errors
    // are the same (the path is built when an error needs it).

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try string(from: try member(key), at: codingPath + [key])
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try bool(from: try member(key), at: codingPath + [key])
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try integer(type, from: try member(key), at: codingPath + [key])
    }

    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try integer(type, from: try member(key), at: codingPath + [key])
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let value = members[key.stringValue], !value.isNull else { return nil }
        return try string(from: value, at: codingPath + [key])
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let value = members[key.stringValue], !value.isNull else { return nil }
        return try integer(type, from: value, at: codingPath + [key])
    }

    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        guard let value = members[key.stringValue], !value.isNull else { return nil }
        return try integer(type, from: value, at: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: try member(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: try member(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: members["super"] ?? .null, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String { "\(intValue!)" }
    var intValue: Int?
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    private mutating func next(_ type: Any.Type) throws -> (JSONValue, [any CodingKey]) {
        let path = codingPath + [IndexKey(currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "array has too few elements"))
        }
        defer { currentIndex += 1 }
        return (elements[currentIndex], path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next(type)
        return try decodeValue(type, from: value, at: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next([String: JSONValue].self)
        return try ValueDecoder(value: value, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next([JSONValue].self)
        return try ValueDecoder(value: value, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next(JSONValue.self)
        return ValueDecoder(value: value, codingPath: path)
    }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        try bool(from: value, at: codingPath)
    }

    func decode(_ type: String.Type) throws -> String {
        try string(from: value, at: codingPath)
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case .double(let double): return double
        case .integer(let integer): return Double(integer)
        default: throw mismatch(type, value, codingPath)
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(type, from: value, at: codingPath)
    }

    /// A whole number in range for `I`.
    private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        try JSON.integer(type, from: value, at: codingPath)
    }
}

/// `value` as a string without U+0000; the coding path is built only for an error.
private func string(from value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]) throws -> String {
    guard case .string(let string) = value else { throw mismatch(String.self, value, codingPath()) }
    guard !string.utf8.contains(0) else {
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "must not contain U+0000 (NUL)"))
    }
    return string
}

/// `value` as a boolean; the coding path is built only for an error.
private func bool(from value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
    guard case .bool(let bool) = value else { throw mismatch(Bool.self, value, codingPath()) }
    return bool
}

/// `value` as a whole number in range for `I`; the coding path is built only for an error.
private func integer<I: FixedWidthInteger>(
    _ type: I.Type, from value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]
) throws -> I {
    let result: I?
    switch value {
    case .integer(let integer): result = I(exactly: integer)
    case .double(let double): result = I(exactly: double)
    default: throw mismatch(type, value, codingPath())
    }
    guard let result else {
        throw DecodingError.dataCorrupted(.init(
            codingPath: codingPath(),
            debugDescription: "\(value) is not a whole number between \(I.min) and \(I.max)"))
    }
    return result
}
