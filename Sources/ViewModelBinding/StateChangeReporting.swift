/// A ViewModel that says itself when what its state shows may have changed, so that the binding does not
/// observe the reads of its state.
///
/// The binding otherwise reads each state under `withObservationTracking`, and Observation registers the
/// reads again after every change and cancels them at the next: ~22k instructions per change of a cart screen
/// (BENCHMARKS.md, round 22), as much as the patch and its notification. A report is one call.
///
/// The ViewModel must report after every change of a value its ``ScreenViewModel/state`` reads, its own or
/// another object's (the session's); a change it does not report is never sent. Debug builds (the tests)
/// check this: they observe the state's reads too, and a read that follows an observed change that was not
/// reported fails an assertion.
///
/// ```swift
/// private var shown = Shown() { didSet { stateDidChange?() } }
/// @ObservationIgnored public var stateDidChange: (@MainActor () -> Void)?
/// ```
@MainActor
public protocol StateChangeReporting: ScreenViewModel {
    /// Called by the ViewModel after each change of what its state reads; set by the binding when the
    /// screen opens (nil until then).
    var stateDidChange: (@MainActor () -> Void)? { get set }
}
