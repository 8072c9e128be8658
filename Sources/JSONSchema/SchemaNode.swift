import JSON

/// What the recording decoder learned of one value's wire shape.
final class SchemaNode {
    /// The shape of a value.
    enum Kind {
        /// Nothing was asked of the value (a type that decodes nothing).
        case unknown
        /// A JSON string, number, integer or boolean.
        case primitive(String)
        /// One of these strings.
        case enumeration([String])
        /// An object with these members, in the order they were asked for.
        case object([(name: String, node: SchemaNode, required: Bool)])
        /// An array of one kind of element.
        case array(SchemaNode)
        /// An object whose member names are free and whose values are all of one kind.
        case dictionary(SchemaNode)
        /// A named shape in `$defs`.
        case reference(String)
        /// A schema given whole (a leaf type such as money).
        case literal(JSONValue)
    }

    var kind: Kind = .unknown
    /// Whether `null` is allowed too (the type asked whether the value was null).
    var isNullable = false

    /// Adds (or finds) the member `name` of an object node.
    func member(_ name: String) -> SchemaNode {
        if case .object(let members) = kind, let existing = members.first(where: { $0.name == name }) {
            return existing.node
        }
        let node = SchemaNode()
        if case .object(var members) = kind {
            members.append((name, node, true))
            kind = .object(members)
        } else {
            kind = .object([(name, node, true)])
        }
        return node
    }

    /// Marks the member `name` as optional (it may be left out).
    func markOptional(_ name: String) {
        guard case .object(var members) = kind, let index = members.firstIndex(where: { $0.name == name }) else { return }
        members[index].required = false
        kind = .object(members)
    }

    /// The JSON Schema (draft 2020-12) of this node; `definitionsPath` prefixes references.
    func jsonSchema(definitionsPath: String) -> JSONValue {
        var schema: [String: JSONValue]
        switch kind {
        case .unknown:
            schema = [:]
        case .primitive(let type):
            schema = ["type": .string(type)]
            if isNullable { return ["type": [.string(type), "null"]] }
        case .enumeration(let values):
            schema = ["enum": .array(values.map { .string($0) } + (isNullable ? [.null] : []))]
            return .object(schema)
        case .object(let members):
            schema = [
                "type": "object", "additionalProperties": false,
                "properties": .object(Dictionary(uniqueKeysWithValues: members.map {
                    ($0.name, $0.node.jsonSchema(definitionsPath: definitionsPath))
                })),
                "required": .array(members.filter(\.required).map { .string($0.name) }.sorted { $0.stringValue! < $1.stringValue! }),
            ]
        case .array(let element):
            schema = ["type": "array", "items": element.jsonSchema(definitionsPath: definitionsPath)]
        case .dictionary(let value):
            schema = ["type": "object", "additionalProperties": value.jsonSchema(definitionsPath: definitionsPath)]
        case .reference(let name):
            schema = ["$ref": .string(definitionsPath + name)]
        case .literal(let value):
            schema = value.objectValue ?? [:]
        }
        guard isNullable else { return .object(schema) }
        return ["oneOf": [["type": "null"], .object(schema)]]
    }
}
