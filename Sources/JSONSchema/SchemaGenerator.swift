import JSON

/// Derives JSON Schemas (draft 2020-12) from `Decodable` types, so that a wire contract is written once:
/// as the Swift type.
///
/// It runs the type's own `init(from:)` against a decoder that answers every question with a placeholder
/// and writes down what was asked: which members (`decode` makes one required, `decodeIfPresent` optional),
/// of which types, and whether `null` was asked about (a member that is always present but may be null, as
/// a value that encodes `nil` as an explicit `null` decodes itself). Enums whose cases are strings
/// (`CaseIterable` and `RawRepresentable<String>`) become `enum`s; arrays and string-keyed dictionaries
/// recurse into their elements. Types registered with ``define(_:as:schema:sample:)`` (leaf types such as
/// money, whose decoding parses a string) or ``name(_:as:)`` (structs shared by several schemas) appear as
/// `$ref`s into ``definitions``.
///
/// ```swift
/// var generator = SchemaGenerator()
/// generator.define(Money.self, as: "Money", schema: ["type": "string", "pattern": "..."], sample: "0.00")
/// let cart = try generator.schema(of: CartState.self)   // {"type": "object", "properties": {...}}
/// ```
public struct SchemaGenerator {
    /// Where `$ref`s point, e.g. `#/$defs/` or `#/components/schemas/`.
    public let definitionsPath: String
    private let recording: Recording

    /// A generator whose references point into `definitionsPath`.
    public init(definitionsPath: String = "#/$defs/") {
        self.definitionsPath = definitionsPath
        recording = Recording(definitionsPath: definitionsPath)
    }

    /// The schemas of the named types met so far, by name.
    public var definitions: [String: JSONValue] { recording.definitions }

    /// Registers a leaf type: everywhere it appears, its schema is a `$ref` to `name`.
    /// - Parameters:
    ///   - type: the type.
    ///   - name: its name in ``definitions``.
    ///   - schema: its schema.
    ///   - sample: a valid wire value, decoded into the placeholder the recording hands back.
    public func define<T: Decodable>(_ type: T.Type, as name: String, schema: JSONValue, sample: JSONValue) {
        recording.leaves[ObjectIdentifier(type)] = (name, sample)
        recording.definitions[name] = schema
    }

    /// Registers a struct shared by several schemas: it is recorded once into ``definitions`` under `name`
    /// and referenced wherever it appears.
    public func name<T: Decodable>(_ type: T.Type, as name: String) {
        recording.named[ObjectIdentifier(type)] = name
    }

    /// The schema of `type`.
    /// - Throws: `SchemaGenerationError` when the type's decoding does something the recording cannot follow.
    public func schema<T: Decodable>(of type: T.Type) throws -> JSONValue {
        let node = SchemaNode()
        _ = try recording.decode(type, into: node)
        return node.jsonSchema(definitionsPath: definitionsPath)
    }

    /// The members of an object type, in the order its decoding asks for them: each one's name, schema and
    /// whether it is required. Empty for a type that decodes no members.
    public func members<T: Decodable>(of type: T.Type) throws -> [(name: String, schema: JSONValue, required: Bool)] {
        let node = SchemaNode()
        _ = try recording.decode(type, into: node)
        guard case .object(let members) = node.kind else { return [] }
        return members.map { ($0.name, $0.node.jsonSchema(definitionsPath: definitionsPath), $0.required) }
    }
}

/// A type whose decoding the schema generator cannot follow.
public struct SchemaGenerationError: Error, CustomStringConvertible {
    /// What happened, naming the type.
    public var description: String
}

/// The state of one generator: registered types and the definitions recorded so far.
final class Recording {
    let definitionsPath: String
    var leaves: [ObjectIdentifier: (name: String, sample: JSONValue)] = [:]
    var named: [ObjectIdentifier: String] = [:]
    var definitions: [String: JSONValue] = [:]
    private var samples: [String: Any] = [:]

    init(definitionsPath: String) {
        self.definitionsPath = definitionsPath
    }

    /// Records `type` into `node` and returns a placeholder value of it.
    func decode<T: Decodable>(_ type: T.Type, into node: SchemaNode) throws -> T {
        let id = ObjectIdentifier(type)
        if let leaf = leaves[id] {
            node.kind = .reference(leaf.name)
            return try JSONValueDecoder().decode(type, from: leaf.sample)
        }
        if let primitive = Self.primitive(type) {
            node.kind = .primitive(primitive.schemaType)
            return primitive.placeholder as! T
        }
        if let enumeration = type as? any CaseIterable.Type, let (values, first) = Self.cases(of: enumeration) {
            node.kind = .enumeration(values)
            return first as! T
        }
        if let array = type as? any ArrayShape.Type {
            let element = SchemaNode()
            _ = try decode(array.elementType, into: element)
            node.kind = .array(element)
            return try JSONValueDecoder().decode(type, from: .array([]))
        }
        if let dictionary = type as? any StringKeyedDictionaryShape.Type {
            let value = SchemaNode()
            _ = try decode(dictionary.valueType, into: value)
            node.kind = .dictionary(value)
            return try JSONValueDecoder().decode(type, from: .object([:]))
        }
        if let name = named[id] {
            node.kind = .reference(name)
            if let sample = samples[name] as? T { return sample }
            let definition = SchemaNode()
            let sample = try T(from: RecordingDecoder(node: definition, recording: self))
            definitions[name] = definition.jsonSchema(definitionsPath: definitionsPath)
            samples[name] = sample
            return sample
        }
        do {
            return try T(from: RecordingDecoder(node: node, recording: self))
        } catch let error as SchemaGenerationError {
            throw error
        } catch {
            // Typically an enum with string raw values that is not CaseIterable: its values cannot be listed.
            throw SchemaGenerationError(description: "\(T.self) cannot be recorded (is it an enum that is not CaseIterable?): \(error)")
        }
    }

    private static func primitive(_ type: Any.Type) -> (schemaType: String, placeholder: Any)? {
        switch type {
        case is String.Type: ("string", "")
        case is Bool.Type: ("boolean", false)
        case is Int.Type: ("integer", 0 as Int)
        case is Int64.Type: ("integer", 0 as Int64)
        case is Int8.Type: ("integer", 0 as Int8)
        case is Int16.Type: ("integer", 0 as Int16)
        case is Int32.Type: ("integer", 0 as Int32)
        case is UInt.Type: ("integer", 0 as UInt)
        case is UInt8.Type: ("integer", 0 as UInt8)
        case is UInt16.Type: ("integer", 0 as UInt16)
        case is UInt32.Type: ("integer", 0 as UInt32)
        case is UInt64.Type: ("integer", 0 as UInt64)
        case is Double.Type: ("number", 0 as Double)
        case is Float.Type: ("number", 0 as Float)
        default: nil
        }
    }

    /// The raw values of an enum whose raw values are strings, and its first case.
    private static func cases<C: CaseIterable>(of type: C.Type) -> ([String], Any)? {
        let values = C.allCases.compactMap { ($0 as? any RawRepresentable)?.rawValue as? String }
        guard let first = C.allCases.first, values.count == C.allCases.count else { return nil }
        return (values, first)
    }
}

/// Arrays, so the recording can reach their element type.
protocol ArrayShape {
    static var elementType: any Decodable.Type { get }
}

extension Array: ArrayShape where Element: Decodable {
    static var elementType: any Decodable.Type { Element.self }
}

/// Dictionaries with string keys (JSON objects with free member names), so the recording can reach
/// their value type.
protocol StringKeyedDictionaryShape {
    static var valueType: any Decodable.Type { get }
}

extension Dictionary: StringKeyedDictionaryShape where Key == String, Value: Decodable {
    static var valueType: any Decodable.Type { Value.self }
}
