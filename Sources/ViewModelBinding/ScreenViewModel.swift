/// A ViewModel the binding can put on the wire: one Codable state snapshot, and a lifecycle that mirrors
/// a screen appearing and going away.
@MainActor
public protocol ScreenViewModel: AnyObject {
    /// The whole state a front end sees.
    associatedtype State: Encodable
    /// The current snapshot. Reading it inside `withObservationTracking` must track everything it uses (unless
    /// the ViewModel reports its changes: ``StateChangeReporting``).
    var state: State { get }
    /// The screen appeared: start the initial load (returns at once).
    func appear()
    /// The screen went away: cancel every task the ViewModel owns.
    func close()
}
