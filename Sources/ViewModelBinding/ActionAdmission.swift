/// Lets actions start in the order they arrived, although some must look something up first.
///
/// An action starts (its ViewModel method is called) in the main-actor turn its request is dispatched
/// in, so pipelined actions reach the ViewModels, and the store, in the order the client sent them. A
/// keyed action first looks its idempotency key up in the store, and such reads end in any order; while
/// one is under way, the actions that arrived after it, keyed or not, wait here for their turn.
///
/// ```swift
/// await admission.enter()        // at once when no action before this one is still being admitted
/// let record = try? await lookUp(key)
/// admission.leave()              // the next action's turn; start this one in this same turn
/// ```
@MainActor
final class ActionAdmission {
    private var isHeld = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Returns when every action that entered before has left; at once, without suspending, when none is
    /// in. Not cancellable: the wait lasts as long as the lookups before it, and ends in ``leave()``.
    func enter() async {
        guard isHeld else {
            isHeld = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the turn to the next action waiting, if any. Call it once per ``enter()``, right before
    /// starting the action (in the same main-actor turn), or when the action ends without starting.
    func leave() {
        if waiting.isEmpty {
            isHeld = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
