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
    /// What the action acts on that its params do not say, read from its ViewModel when it starts: a product
    /// page's product and quantity, a form's fields, a catalog's selection. It is part of a keyed request's
    /// fingerprint, so that a key used for one effect is refused for another (`idempotencyKeyReused`), not
    /// answered as its replay. Nil: the params say it all.
    let subject: (@MainActor @Sendable (AnyObject) -> JSONValue)?
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
    ///   - subject: what the action acts on that its params do not say (see ``subject``); nil when they say it all.
    public static func action<Model: ScreenViewModel, Arguments: Decodable>(
        _ name: String, summary: String, stores: Bool = false, on model: Model.Type, arguments: Arguments.Type,
        subject: (@MainActor @Sendable (Model) -> JSONValue)? = nil,
        perform: @escaping @MainActor @Sendable (Model, Arguments) async throws -> [String: JSONValue]
    ) -> ActionDefinition {
        ActionDefinition(
            name: name, summary: summary, stores: stores, subject: erased(subject),
            params: { try $0.members(of: Arguments.self) }
        ) { object, request in
            let arguments = try request.decodeParams(Arguments.self)
            return try await perform(object as! Model, arguments)
        }
    }

    /// An action without params beyond `viewModel`.
    public static func action<Model: ScreenViewModel>(
        _ name: String, summary: String, stores: Bool = false, on model: Model.Type,
        subject: (@MainActor @Sendable (Model) -> JSONValue)? = nil,
        perform: @escaping @MainActor @Sendable (Model) async throws -> [String: JSONValue]
    ) -> ActionDefinition {
        ActionDefinition(
            name: name, summary: summary, stores: stores, subject: erased(subject),
            params: { _ in [] }
        ) { object, _ in
            try await perform(object as! Model)
        }
    }
}

extension ActionDefinition {
    /// `subject` taking its ViewModel as the host holds it.
    private static func erased<Model: ScreenViewModel>(
        _ subject: (@MainActor @Sendable (Model) -> JSONValue)?
    ) -> (@MainActor @Sendable (AnyObject) -> JSONValue)? {
        guard let subject else { return nil }
        return { object in subject(object as! Model) }
    }
}

/// An OpenRPC content descriptor `{name, required, schema}`.
public func param(_ name: String, _ schema: JSONValue, required: Bool = true, summary: String? = nil) -> JSONValue {
    var members: [String: JSONValue] = ["name": .string(name), "required": .bool(required), "schema": schema]
    if let summary { members["summary"] = .string(summary) }
    return .object(members)
}

extension JSONValue {
    /// `value`'s JSON form, for an action's ``ActionDefinition/subject`` (a form's fields). Such values are plain
    /// and always encode; one that did not would be described by its text instead, which still tells two apart.
    static func encoding<Value: Encodable>(_ value: Value) -> JSONValue {
        (try? JSONValueEncoder().encode(value)) ?? .string(String(describing: value))
    }
}
