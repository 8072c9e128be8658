import JSON
import JSONPatch
import JSONRPC
import JSONSchema

/// A ViewModel type a client can open: its wire name, its state and open arguments as Swift types, its
/// actions, and how to make one in an `Environment` (the services it runs on).
///
/// The definition is the one place the contract of a ViewModel type is written: `rpc.discover`, the
/// OpenRPC document and the state schemas are derived from its types (see ``ProtocolContract``).
public struct ViewModelDefinition<Environment>: Sendable {
    /// The wire name (`catalog`, `cart`, ...): the `type` of `viewModel/open` and the prefix of actions.
    public let type: String
    /// The actions, served as `<type>/<name>`.
    public let actions: [ActionDefinition]
    /// The name of the state type (`CartState`), which names its schema.
    public let stateName: String
    /// The name of the open-arguments type (`ProductDetailArguments`), or nil when it takes none.
    public let argumentsName: String?
    /// Records the state type's schema.
    let stateSchema: @Sendable (SchemaGenerator) throws -> JSONValue
    /// Records the open-arguments type's schema, when there is one.
    let argumentsSchema: (@Sendable (SchemaGenerator) throws -> JSONValue)?
    let make: @MainActor @Sendable (Environment, JSONValue) throws -> OpenScreen

    /// A definition for ViewModels of type `Model` that take no open arguments.
    ///
    /// - Parameters:
    ///   - type: the wire name.
    ///   - actions: the actions.
    ///   - make: makes a ViewModel in an environment.
    public static func screen<Model: ScreenViewModel>(
        _ type: String, actions: [ActionDefinition],
        make: @escaping @MainActor @Sendable (Environment) throws -> Model
    ) -> ViewModelDefinition where Model.State: Decodable {
        ViewModelDefinition(
            type: type, actions: actions, stateName: String(describing: Model.State.self), argumentsName: nil,
            stateSchema: { try $0.schema(of: Model.State.self) }, argumentsSchema: nil
        ) { environment, _ in OpenScreen(try make(environment)) }
    }

    /// A definition for ViewModels of type `Model` opened with `args` of type `Arguments`.
    ///
    /// - Parameters:
    ///   - type: the wire name.
    ///   - arguments: the type `args` decode into; its members are the open arguments on the wire.
    ///   - actions: the actions.
    ///   - make: makes a ViewModel in an environment from the decoded arguments.
    public static func screen<Model: ScreenViewModel, Arguments: Decodable>(
        _ type: String, arguments: Arguments.Type, actions: [ActionDefinition],
        make: @escaping @MainActor @Sendable (Environment, Arguments) throws -> Model
    ) -> ViewModelDefinition where Model.State: Decodable {
        ViewModelDefinition(
            type: type, actions: actions, stateName: String(describing: Model.State.self),
            argumentsName: String(describing: Arguments.self),
            stateSchema: { try $0.schema(of: Model.State.self) },
            argumentsSchema: { try $0.schema(of: Arguments.self) }
        ) { environment, args in
            OpenScreen(try make(environment, try JSONValueDecoder().decode(Arguments.self, from: args)))
        }
    }
}

/// A state read because it changed: its JSON form, and the patch to it from the form read before when the
/// state type made that patch itself (``JSONPatchDiffable``; nil: the caller diffs the two forms).
struct ChangedState {
    let json: JSONValue
    let patch: JSONPatch?
}

/// A type-erased open ViewModel.
@MainActor
final class OpenScreen {
    let object: AnyObject
    /// Reads the state snapshot and encodes it, unless it is equal to the one read last (when the state
    /// type is `Equatable`): nil then. A change somewhere else in the shop marks every ViewModel that
    /// read the changed property, though most of them show the same as before; comparing the snapshot
    /// values is much cheaper than encoding one and diffing the result. A state that did change is, in
    /// order of preference: taken from another ViewModel of the connection that has just encoded an equal
    /// state (a second cart screen showing the same cart; `shared`); patched from `current`, the form of the
    /// state read last, when its type makes its own patch (``JSONPatchDiffable``: the cart); or encoded,
    /// reusing the encodings of the array elements (cart lines, listed products) that did not change.
    let readChangedState: @MainActor (_ shared: SharedEncodings, _ current: JSONValue) throws -> ChangedState?
    let appear: @MainActor () -> Void
    let close: @MainActor () -> Void

    init<Model: ScreenViewModel>(_ model: Model) {
        let encoder = JSONValueEncoder()
        object = model
        let equal = Self.equality(of: Model.State.self)
        let typedPatch = Self.typedPatch(of: Model.State.self)
        var last: Model.State?
        let memo = EncodingMemo()
        readChangedState = { shared, current in
            let state = model.state
            guard let equal else { return ChangedState(json: try encoder.encode(state, reusing: memo), patch: nil) }
            if let last, equal(last, state) { return nil }
            let changed: ChangedState
            if let encoded = shared.encoding(of: state, equal: equal) {
                changed = ChangedState(json: encoded, patch: nil)
            } else if let last, let typedPatch, let patch = typedPatch(last, state), let patched = try? patch.apply(to: current) {
                // `current` is the form of `last`: the host keeps every form read, or an equal one. Debug builds
                // (the tests) check the patched form against the encoded one.
                assert((try? encoder.encode(state)) == patched, "\(Model.State.self)'s own patch gave another form than its encoding")
                shared.keep(state, patched)
                changed = ChangedState(json: patched, patch: patch)
            } else {
                let encoded = try encoder.encode(state, reusing: memo)
                shared.keep(state, encoded)
                changed = ChangedState(json: encoded, patch: nil)
            }
            last = state
            return changed
        }
        appear = { model.appear() }
        close = { model.close() }
    }

    /// `==` of `State` when it is `Equatable`.
    private static func equality<State>(of type: State.Type) -> ((State, State) -> Bool)? {
        guard let equatable = type as? any Equatable.Type else { return nil }
        func equality<E: Equatable>(_: E.Type) -> (State, State) -> Bool {
            { ($0 as! E) == ($1 as! E) }
        }
        return equality(equatable)
    }

    /// `State`'s own patch from an old state to a new one, when it makes one (``JSONPatchDiffable``).
    private static func typedPatch<State>(of type: State.Type) -> ((State, State) -> JSONPatch?)? {
        guard let diffable = type as? any JSONPatchDiffable.Type else { return nil }
        func typedPatch<D: JSONPatchDiffable>(_: D.Type) -> (State, State) -> JSONPatch? {
            { ($1 as! D).patch(from: $0 as! D) }
        }
        return typedPatch(diffable)
    }
}

/// The state of each state type that a connection's ViewModels encoded last, so that another ViewModel
/// showing an equal state takes that encoding instead of encoding it again (two screens of one cart:
/// comparing the two states costs a fraction of encoding one, as their values share storage).
@MainActor
final class SharedEncodings {
    /// One state type's last encoding.
    private final class Kept<State> {
        let state: State
        let encoded: JSONValue
        init(_ state: State, _ encoded: JSONValue) {
            self.state = state
            self.encoded = encoded
        }
    }

    private var kept: [ObjectIdentifier: AnyObject] = [:]

    /// The encoding of a state equal to `state`, if it is the last one of its type encoded.
    func encoding<State>(of state: State, equal: (State, State) -> Bool) -> JSONValue? {
        guard let kept = kept[ObjectIdentifier(State.self)] as? Kept<State>, equal(kept.state, state) else { return nil }
        return kept.encoded
    }

    /// Keeps `encoded`, the encoding of `state`, as its type's last.
    func keep<State>(_ state: State, _ encoded: JSONValue) {
        kept[ObjectIdentifier(State.self)] = Kept(state, encoded)
    }
}
