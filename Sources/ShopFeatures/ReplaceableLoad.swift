import Shop

/// The load that decides what a screen shows: starting one cancels the one running, and a load its caller
/// abandoned (cancelled, with nothing newer started) puts back the phase it replaced, so a screen never
/// shows `loading` for ever.
@MainActor
final class ReplaceableLoad {
    /// How a load reads and sets its owner's phase.
    struct PhaseAccess {
        let get: @MainActor () -> Phase?
        let set: @MainActor (Phase) -> Void
    }

    /// Counts the loads started, so that one can tell whether a newer one replaced it.
    private(set) var generation = 0
    private var task: Task<Bool, Never>?
    /// The phase the running load replaced.
    private var phaseBefore: Phase = .idle
    /// Whether a change arrived while the running load ran (it may have read before the change).
    private var missedChange = false

    /// Starts `body` with the phase set to `loading`, cancelling the load under way.
    /// - Parameters:
    ///   - phase: the owner's phase.
    ///   - reloadAfterAbandon: what the owner loads again when this load is abandoned (its phase put back)
    ///     after a change arrived while it ran: what the screen shows again predates that change.
    ///   - body: loads and shows the result; returns `true` when it showed one (content or failure).
    /// - Returns: the load; its value is `true` when it showed its result.
    @discardableResult
    func start(
        phase: PhaseAccess, reloadAfterAbandon: (@MainActor () -> Void)? = nil,
        _ body: @escaping @MainActor () async -> Bool
    ) -> Task<Bool, Never> {
        task?.cancel()
        generation += 1
        missedChange = false
        let started = generation
        if let current = phase.get(), current != .loading { phaseBefore = current }
        phase.set(.loading)
        let task = Task { [weak self] () -> Bool in
            let shown = await body()
            if !shown, let self, started == self.generation, phase.get() == .loading {
                phase.set(self.phaseBefore)
                if self.takeMissedChange(), self.phaseBefore == .loaded { reloadAfterAbandon?() }
            }
            return shown
        }
        self.task = task
        return task
    }

    /// How `task`, just returned by ``start(phase:_:)``, ends for its caller: shown, replaced by a newer
    /// load, or cancelled. Call it right after starting (it reads the current generation).
    func outcome(of task: Task<Bool, Never>) async -> IntentOutcome {
        let started = generation
        return await task.outcome(generation: started) { self.generation }
    }

    /// Notes that a change of what the load reads arrived while it runs (it may have read before the
    /// change), and tracks the load on `events`, so that the answer of the action that caused the change
    /// waits for it and for what its owner loads again after it (see ``takeMissedChange()``).
    func noteMissedChange(tracking events: ShopEvents) {
        missedChange = true
        if let task { events.track(task) }
    }

    /// Whether a change arrived while the load that just showed its result ran; the owner then loads
    /// again what changed. Clears the note.
    func takeMissedChange() -> Bool {
        defer { missedChange = false }
        return missedChange
    }

    /// Cancels the load under way and forgets it, so that its end changes nothing.
    func cancel() {
        task?.cancel()
        task = nil
        generation += 1
    }
}
