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

/// The patch of one change of a state, from the form the client has to the new one: made once, and sent
/// by every ViewModel of the connection that made the same change (two screens of one cart), serialised
/// once for all of them.
@MainActor
final class StatePatch {
    /// The operations.
    let patch: JSONPatch
    private var serialized: [UInt8]?

    init(_ patch: JSONPatch) {
        self.patch = patch
    }

    /// The patch as JSON text (an array of operations), written on first use.
    var bytes: [UInt8] {
        if let serialized { return serialized }
        var bytes: [UInt8] = []
        // A cart change's patch is ~150 bytes: one allocation, not one per doubling from empty.
        bytes.reserveCapacity(256)
        patch.serialize(into: &bytes)
        serialized = bytes
        return bytes
    }
}

/// A type-erased open ViewModel, with the state its client has: the state read last, and its JSON form.
///
/// The form is built when something needs it (a snapshot, a diff of two forms), not at every change: a state
/// type that makes its own patch (``JSONPatchDiffable``: the cart) goes from state to state without one.
@MainActor
final class OpenScreen {
    let object: AnyObject
    /// Reads the state and returns the patch from the state read last, or nil when the two are equal (when
    /// the state type is `Equatable`). A change somewhere else in the shop marks every ViewModel that read
    /// the changed property, though most of them show the same as before; comparing the snapshot values is
    /// much cheaper than encoding one and diffing the result. The patch of a state that did change is, in
    /// order of preference: the one another ViewModel of the connection made for the same change (a second
    /// cart screen showing the same cart; `shared`); the state type's own (``JSONPatchDiffable``: the cart),
    /// which builds no form; or the diff of the two forms, the new one encoded reusing the encodings of the
    /// array elements (cart lines, listed products) that did not change, or taken from another ViewModel
    /// that has just encoded an equal state. The first read's patch replaces the whole (`null` before it).
    let readChangedState: @MainActor (_ shared: SharedEncodings) throws -> StatePatch?
    /// The JSON form of the state read last (`null` before the first read): kept when it was built, else
    /// encoded now and kept until the next change.
    let form: @MainActor () throws -> JSONValue
    /// Whether the form of the state read last is built (for tests).
    let holdsForm: @MainActor () -> Bool
    let appear: @MainActor () -> Void
    let close: @MainActor () -> Void
    /// Gives a ViewModel that reports its changes (``StateChangeReporting``) the handler of its reports, or takes
    /// it back (nil: when the screen closes); nil for another ViewModel, whose reads the binding observes.
    let reportChanges: (@MainActor (_ handler: (@MainActor () -> Void)?) -> Void)?

    init<Model: ScreenViewModel>(_ model: Model) {
        if let reporting = model as? any StateChangeReporting {
            reportChanges = { reporting.stateDidChange = $0 }
        } else {
            reportChanges = nil
        }
        let encoder = JSONValueEncoder()
        object = model
        let equal = Self.equality(of: Model.State.self)
        let typedPatch = Self.typedPatch(of: Model.State.self)
        // The state read last, and its form when built (nil: not built since that read).
        var last: Model.State?
        var lastForm: JSONValue?
        let memo = EncodingMemo()
        let form: @MainActor () throws -> JSONValue = {
            if let lastForm { return lastForm }
            guard let last else { return .null }
            let encoded = try encoder.encode(last, reusing: memo)
            lastForm = encoded
            return encoded
        }
        self.form = form
        holdsForm = { lastForm != nil }
        readChangedState = { shared in
            let state = model.state
            guard let equal else {
                let encoded = try encoder.encode(state, reusing: memo)
                let patch = StatePatch(JSONPatch.diff(from: try form(), to: encoded))
                (last, lastForm) = (state, encoded)
                return patch
            }
            guard let previous = last else {
                let encoded = try shared.encoding(of: state, equal: equal) ?? encoder.encode(state, reusing: memo)
                shared.keep(from: nil, to: state, form: encoded, patch: nil)
                (last, lastForm) = (state, encoded)
                return StatePatch(JSONPatch([.replace(path: .root, value: encoded)]))
            }
            if equal(previous, state) { return nil }
            if let made = shared.patch(from: previous, to: state, equal: equal) {
                (last, lastForm) = (state, made.form)
                return made.patch
            }
            if let typedPatch, let patch = typedPatch(previous, state) {
                // Debug builds (the tests) check the patch against the two encoded forms.
                assert((try? patch.apply(to: encoder.encode(previous))) == (try? encoder.encode(state)),
                       "\(Model.State.self)'s own patch gave another form than its encoding")
                let made = StatePatch(patch)
                shared.keep(from: previous, to: state, form: nil, patch: made)
                (last, lastForm) = (state, nil)
                return made
            }
            let old = try form()
            let encoded = try shared.encoding(of: state, equal: equal) ?? encoder.encode(state, reusing: memo)
            let made = StatePatch(JSONPatch.diff(from: old, to: encoded))
            shared.keep(from: previous, to: state, form: encoded, patch: made)
            (last, lastForm) = (state, encoded)
            return made
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

/// The last state of each state type that a connection's ViewModels read, with its form when it was built and
/// the patch from the state before it: another ViewModel showing an equal state takes that form instead of
/// encoding it again, and one making the same change takes that patch (two screens of one cart: comparing
/// two states costs a fraction of encoding or diffing one, as their values share storage).
@MainActor
final class SharedEncodings {
    /// One state type's last read.
    private final class Kept<State> {
        let old: State?
        let new: State
        let form: JSONValue?
        let patch: StatePatch?
        init(old: State?, new: State, form: JSONValue?, patch: StatePatch?) {
            (self.old, self.new, self.form, self.patch) = (old, new, form, patch)
        }
    }

    private var kept: [ObjectIdentifier: AnyObject] = [:]

    /// The form of a state equal to `state`, if it is the last one of its type read and its form was built.
    func encoding<State>(of state: State, equal: (State, State) -> Bool) -> JSONValue? {
        guard let kept = kept[ObjectIdentifier(State.self)] as? Kept<State>, let form = kept.form, equal(kept.new, state) else {
            return nil
        }
        return form
    }

    /// The patch made for the change from `old` to `new`, if it is the last change of its type read, with the
    /// new state's form when it was built.
    func patch<State>(from old: State, to new: State, equal: (State, State) -> Bool) -> (patch: StatePatch, form: JSONValue?)? {
        guard let kept = kept[ObjectIdentifier(State.self)] as? Kept<State>, let patch = kept.patch, let keptOld = kept.old,
              equal(kept.new, new), equal(keptOld, old)
        else { return nil }
        return (patch, kept.form)
    }

    /// Keeps a read of `new` (after `old`, nil for a first read) as its type's last, with its form when built and
    /// the patch from `old`'s.
    func keep<State>(from old: State?, to new: State, form: JSONValue?, patch: StatePatch?) {
        kept[ObjectIdentifier(State.self)] = Kept(old: old, new: new, form: form, patch: patch)
    }
}
