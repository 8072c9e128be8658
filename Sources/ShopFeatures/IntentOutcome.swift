/// How an intent that a later one can replace (a search, a filter, a reload) ended.
public enum IntentOutcome: String, Codable, Sendable {
    /// Its result (or its failure) is what the state shows.
    case completed
    /// A newer intent replaced it before it finished; not an error, and the state shows the newer one's.
    case superseded
    /// The caller was cancelled (or the ViewModel closed) before it finished; the state shows what it
    /// showed before the intent.
    case cancelled
}

extension Task where Success == Bool, Failure == Never {
    /// Waits for a replaceable load (whose value says whether it showed its result) and tells how it ended.
    /// - Parameters:
    ///   - generation: the load's generation when it started.
    ///   - current: the generation now; a different one means a newer load replaced it.
    func outcome(generation: Int, current: @MainActor () -> Int) async -> IntentOutcome {
        if await valueCancellingWithCaller() { return .completed }
        return await current() != generation ? .superseded : .cancelled
    }
}
