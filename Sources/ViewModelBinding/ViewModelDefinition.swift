import JSON
import JSONRPC

/// A ViewModel type a client can open: its wire name, how to make one, and its actions.
public struct ViewModelDefinition: Sendable {
    /// The wire name (`catalog`, `cart`, ...): the `type` of `viewModel/open` and the prefix of actions.
    public let type: String
    /// One line for the OpenRPC document.
    public let summary: String
    /// OpenRPC content descriptors of `args` in `viewModel/open`.
    public let arguments: [JSONValue]
    /// The actions, served as `<type>/<name>`.
    public let actions: [ActionDefinition]
    /// The name of the JSON Schema of the state (`protocol/schemas/<name>.json`), e.g. `CartState`.
    public let stateSchemaName: String
    let make: @MainActor @Sendable (JSONValue) throws -> OpenScreen

    /// A definition for ViewModels of type `Model`.
    ///
    /// - Parameters:
    ///   - type: the wire name.
    ///   - summary: one line for the OpenRPC document.
    ///   - arguments: OpenRPC content descriptors of the open `args`.
    ///   - stateSchemaName: the state schema's name.
    ///   - actions: the actions.
    ///   - make: makes a ViewModel from the open `args` (an object; `{}` when absent). Throw an
    ///     ``RPCError`` (or a `DecodingError`) for bad arguments.
    public static func screen<Model: ScreenViewModel>(
        _ type: String, summary: String, arguments: [JSONValue] = [], stateSchemaName: String,
        actions: [ActionDefinition], make: @escaping @MainActor @Sendable (JSONValue) throws -> Model
    ) -> ViewModelDefinition {
        ViewModelDefinition(
            type: type, summary: summary, arguments: arguments, actions: actions, stateSchemaName: stateSchemaName
        ) { args in
            OpenScreen(try make(args))
        }
    }
}

/// A type-erased open ViewModel.
@MainActor
final class OpenScreen {
    let object: AnyObject
    let readState: @MainActor () throws -> JSONValue
    let appear: @MainActor () -> Void
    let close: @MainActor () -> Void

    init<Model: ScreenViewModel>(_ model: Model) {
        let encoder = JSONValueEncoder()
        object = model
        readState = { try encoder.encode(model.state) }
        appear = { model.appear() }
        close = { model.close() }
    }
}
