import JSON
import ShopFeatures

extension IntentOutcome {
    /// The action's extra result members: `{superseded: true}` when a newer intent replaced it, nothing
    /// when it completed.
    /// - Throws: `CancellationError` when it was cancelled, answered -32800.
    func resultMembers() throws -> [String: JSONValue] {
        switch self {
        case .completed: return [:]
        case .superseded: return ["superseded": true]
        case .cancelled: throw CancellationError()
        }
    }
}
