import JSON
import JSONRPC
import JSONSchema

/// One action of a ViewModel type, served as the method `<type>/<name>`.
///
/// Its params are its `Arguments` type: the members that type decodes (besides `viewModel`) are the
/// params on the wire and in `rpc.discover`, with their types, optionality and allowed values.
public struct ActionDefinition: Sendable {
    /// The action's name (`add` in `cart/add`).
    public let name: String
    /// One line for the OpenRPC document.
    public let summary: String
    /// Whether the action stores something: it then takes an `idempotencyKey`.
    public let stores: Bool
    /// Records the params' members.
    let params: @Sendable (SchemaGenerator) throws -> [(name: String, schema: JSONValue, required: Bool)]
    /// Performs the action on a ViewModel of the right type; returns extra result members
    /// (`version` is added by the host).
    let perform: @MainActor @Sendable (AnyObject, Request) async throws -> [String: JSONValue]

    /// An action whose params decode into `Arguments`.
    ///
    /// - Parameters:
    ///   - name: the action's name.
    ///   - summary: one line for the OpenRPC document.
    ///   - arguments: the type the params decode into.
    ///   - perform: runs the action and returns extra result members (`[:]` for none).
    ///   - stores: whether the action stores something (it then takes an `idempotencyKey`).
    public static func action<Model: ScreenViewModel, Arguments: Decodable>(
        _ name: String, summary: String, stores: Bool = false, on model: Model.Type, arguments: Arguments.Type,
        perform: @escaping @MainActor @Sendable (Model, Arguments) async throws -> [String: JSONValue]
    ) -> ActionDefinition {
        ActionDefinition(name: name, summary: summary, stores: stores, params: { try $0.members(of: Arguments.self) }) { object, request in
            let arguments = try request.decodeParams(Arguments.self)
            return try await perform(object as! Model, arguments)
        }
    }

    /// An action without params beyond `viewModel`.
    public static func action<Model: ScreenViewModel>(
        _ name: String, summary: String, stores: Bool = false, on model: Model.Type,
        perform: @escaping @MainActor @Sendable (Model) async throws -> [String: JSONValue]
    ) -> ActionDefinition {
        ActionDefinition(name: name, summary: summary, stores: stores, params: { _ in [] }) { object, _ in
            try await perform(object as! Model)
        }
    }
}

/// An OpenRPC content descriptor `{name, required, schema}`.
public func param(_ name: String, _ schema: JSONValue, required: Bool = true, summary: String? = nil) -> JSONValue {
    var members: [String: JSONValue] = ["name": .string(name), "required": .bool(required), "schema": schema]
    if let summary { members["summary"] = .string(summary) }
    return .object(members)
}
