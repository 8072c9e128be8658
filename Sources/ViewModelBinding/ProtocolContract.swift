import JSON
import JSONRPC
import JSONSchema

/// The ViewModel part of the wire contract, derived from the definitions' Swift types: the OpenRPC
/// descriptions of `viewModel/open|get|close` and every action, the schemas of every state and set of
/// open arguments (`components.schemas`), and each state's schema as a document of its own
/// (`protocol/schemas/<State>.json`).
///
/// Nothing here needs services or a database: it reads types, not values.
public struct ProtocolContract<Environment>: Sendable {
    /// The ViewModel types, in the order they are listed.
    public let definitions: [ViewModelDefinition<Environment>]
    /// Registers the leaf and shared types of the states (money, dates, errors) with a generator.
    let vocabulary: @Sendable (SchemaGenerator) -> Void
    /// Keywords added to the schemas of shared types, by type name and member (`minimum`, `description`).
    let notes: [String: [String: JSONValue]]
    /// Further `components.schemas` (e.g. the `data` of action errors).
    let extraComponents: [String: JSONValue]
    /// The OpenRPC error objects every action may answer besides -32602.
    let actionErrors: [JSONValue]

    /// A contract over `definitions`.
    /// - Parameters:
    ///   - definitions: the ViewModel types.
    ///   - vocabulary: registers leaf types (``SchemaGenerator/define(_:as:schema:sample:)``) and shared
    ///     structs (``SchemaGenerator/name(_:as:)``) with a generator.
    ///   - notes: keywords to add to members of schemas (states, arguments and shared types), by schema
    ///     name, then member name. A note naming a member the type does not have is an error: the notes
    ///     cannot drift from the types.
    ///   - extraComponents: further component schemas.
    ///   - actionErrors: the OpenRPC error objects every action may answer besides -32602 (their `data`
    ///     may refer to `extraComponents`).
    public init(
        definitions: [ViewModelDefinition<Environment>], vocabulary: @escaping @Sendable (SchemaGenerator) -> Void = { _ in },
        notes: [String: [String: JSONValue]] = [:], extraComponents: [String: JSONValue] = [:],
        actionErrors: [JSONValue] = []
    ) {
        self.definitions = definitions
        self.vocabulary = vocabulary
        self.notes = notes
        self.extraComponents = extraComponents
        self.actionErrors = actionErrors
    }

    static var componentsPath: String { "#/components/schemas/" }

    private func generator(path: String) -> SchemaGenerator {
        let generator = SchemaGenerator(definitionsPath: path)
        vocabulary(generator)
        return generator
    }

    // MARK: OpenRPC

    /// `components.schemas`: every state, every open-arguments type, the shared types they use,
    /// `ViewModelState`, `ActionResult` and the extra components.
    /// - Throws: when a type cannot be recorded or a note names a member that does not exist.
    public func componentSchemas() throws -> [String: JSONValue] {
        let generator = generator(path: Self.componentsPath)
        var schemas: [String: JSONValue] = [:]
        for definition in definitions {
            schemas[definition.stateName] = try definition.stateSchema(generator)
            if let name = definition.argumentsName, let record = definition.argumentsSchema {
                schemas[name] = try record(generator)
            }
        }
        schemas.merge(generator.definitions) { own, _ in own }
        for (name, schema) in schemas { schemas[name] = try annotated(schema, named: name) }
        schemas["ViewModelState"] = [
            "type": "object", "additionalProperties": false, "required": ["viewModel", "version", "state"],
            "properties": [
                "viewModel": ["type": "string"], "version": ["type": "integer", "minimum": 1],
                "state": ["oneOf": .array(definitions.map { ["$ref": .string(Self.componentsPath + $0.stateName)] })],
            ],
        ]
        schemas["ActionResult"] = [
            "type": "object", "required": ["version"],
            "properties": [
                "version": ["type": "integer", "minimum": 1],
                "superseded": ["type": "boolean", "description": "A newer intent replaced this one before it finished."],
            ],
        ]
        schemas.merge(extraComponents) { _, extra in extra }
        return schemas
    }

    /// The OpenRPC descriptions of `viewModel/open`, `viewModel/get`, `viewModel/close` and every action.
    public func methodDescriptions() throws -> [MethodDescription] {
        let generator = generator(path: Self.componentsPath)
        let types = JSONValue.array(definitions.map { .string($0.type) })
        let opened: [String] = definitions.compactMap { definition in
            definition.argumentsName.map { "\(definition.type): \($0)" }
        }
        var descriptions = [
            MethodDescription(
                name: "viewModel/open", summary: "Opens a ViewModel (a screen appears) and starts its initial load.",
                params: [
                    param("type", ["type": "string", "enum": types]),
                    param("args", ["type": "object"], required: false,
                          summary: "The type's open arguments (\(opened.joined(separator: "; ")); see components.schemas); others take none."),
                ],
                result: ["name": "OpenedViewModel", "schema": ["$ref": .string(Self.componentsPath + "ViewModelState")]],
                errors: [Self.invalidParamsError]),
            MethodDescription(
                name: "viewModel/close", summary: "Closes a ViewModel (the screen goes away); its tasks are cancelled.",
                params: [param("viewModel", ["type": "string"])],
                result: ["name": "Null", "schema": ["type": "null"]], errors: [Self.invalidParamsError]),
            MethodDescription(
                name: "viewModel/get", summary: "Returns a ViewModel's current version and whole state (to resync).",
                params: [param("viewModel", ["type": "string"])],
                result: ["name": "ViewModelState", "schema": ["$ref": .string(Self.componentsPath + "ViewModelState")]],
                errors: [Self.invalidParamsError]),
        ]
        for definition in definitions {
            for action in definition.actions {
                var params = try action.params(generator).map { param($0.name, $0.schema, required: $0.required) }
                params.append(param(
                    "expectedVersion", ["type": "integer", "minimum": 1], required: false,
                    summary: "The ViewModel version the client acted on; a ViewModel that moved on refuses with -32004."))
                if action.stores {
                    params.append(param(
                        "idempotencyKey", ["type": "string", "minLength": 1, "maxLength": 128], required: false,
                        summary: "A retry with the same key within 24 hours answers the first result instead of applying it again."))
                }
                descriptions.append(MethodDescription(
                    name: "\(definition.type)/\(action.name)", summary: action.summary,
                    params: [param("viewModel", ["type": "string"])] + params,
                    result: ["name": "ActionResult", "schema": ["$ref": .string(Self.componentsPath + "ActionResult")]],
                    errors: [Self.invalidParamsError] + actionErrors))
            }
        }
        return descriptions
    }

    /// The `x-viewModels` member of the OpenRPC document: each ViewModel type's state schema and open
    /// arguments' schema (when it takes any), as references into `components.schemas`, so a client or a
    /// conformance suite finds them without restating them.
    public var viewModelIndex: JSONValue {
        .object(Dictionary(uniqueKeysWithValues: definitions.map { definition in
            var entry: [String: JSONValue] = ["state": .string(Self.componentsPath + definition.stateName)]
            if let arguments = definition.argumentsName { entry["arguments"] = .string(Self.componentsPath + arguments) }
            return (definition.type, .object(entry))
        }))
    }

    static var invalidParamsError: JSONValue { ["code": RPCErrorCode.invalidParams.jsonValue, "message": "Invalid params"] }

    // MARK: Schema documents

    /// Each state's schema as a JSON Schema document of its own, with the shared types it uses in `$defs`,
    /// by state name.
    public func stateSchemaDocuments(idPrefix: String) throws -> [String: JSONValue] {
        var documents: [String: JSONValue] = [:]
        for definition in definitions {
            let generator = generator(path: "#/$defs/")
            guard case .object(var document) = try annotated(try definition.stateSchema(generator), named: definition.stateName)
            else { continue }
            document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
            document["$id"] = .string("\(idPrefix)\(definition.stateName).json")
            document["title"] = .string(definition.stateName)
            document["description"] = .string("The state of the \(definition.type) ViewModel.")
            let used = Self.referencedDefinitions(in: .object(document), among: generator.definitions)
            if !used.isEmpty {
                document["$defs"] = .object(try used.reduce(into: [:]) { defs, name in
                    defs[name] = try annotated(generator.definitions[name]!, named: name)
                })
            }
            documents[definition.stateName] = .object(document)
        }
        return documents
    }

    /// The names of `definitions` that `schema` refers to, directly or through each other.
    private static func referencedDefinitions(in schema: JSONValue, among definitions: [String: JSONValue]) -> [String] {
        var found: Set<String> = []
        var pending = [schema]
        while let value = pending.popLast() {
            switch value {
            case .object(let members):
                if case .string(let reference)? = members["$ref"], reference.hasPrefix("#/$defs/") {
                    let name = String(reference.dropFirst("#/$defs/".count))
                    if found.insert(name).inserted, let definition = definitions[name] { pending.append(definition) }
                }
                pending.append(contentsOf: members.values)
            case .array(let elements):
                pending.append(contentsOf: elements)
            default:
                break
            }
        }
        return found.sorted()
    }

    /// `schema` with the notes for `name` added to its members.
    private func annotated(_ schema: JSONValue, named name: String) throws -> JSONValue {
        guard let notes = notes[name] else { return schema }
        guard case .object(var members) = schema, case .object(var properties)? = members["properties"] else {
            throw ContractError(description: "notes for \(name), which has no members")
        }
        for (member, keywords) in notes {
            guard case .object(var property)? = properties[member], case .object(let added) = keywords else {
                throw ContractError(description: "a note for \(name).\(member), which \(name) does not have")
            }
            property.merge(added) { _, note in note }
            properties[member] = .object(property)
        }
        members["properties"] = .object(properties)
        return .object(members)
    }
}

/// A contract that cannot be derived from its types (a programming error, found by the tests).
public struct ContractError: Error, CustomStringConvertible {
    /// What is wrong.
    public var description: String
}
