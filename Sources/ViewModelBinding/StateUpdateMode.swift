/// How `viewModel/changed` carries a change, as the client asked in `initialize`
/// (`capabilities.stateUpdates`).
public enum StateUpdateMode: String, Sendable, Decodable {
    /// An RFC 6902 JSON Patch from the previous version (the default).
    case patch
    /// The whole new state.
    case snapshot
}
