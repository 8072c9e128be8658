/// Tasks a ViewModel owns but does not address one by one; all cancelled by `close()`.
@MainActor
final class TaskBag {
    private var tasks: [Int: Task<Void, Never>] = [:]
    private var nextId = 0

    /// Runs `operation` as an owned task, forgotten when it ends.
    @discardableResult
    func run(_ operation: @escaping @MainActor () async -> Void) -> Task<Void, Never> {
        nextId += 1
        let id = nextId
        let task = Task { @MainActor [weak self] in
            await operation()
            self?.tasks[id] = nil
        }
        tasks[id] = task
        return task
    }

    /// Cancels every task.
    func cancelAll() {
        for task in tasks.values { task.cancel() }
        tasks = [:]
    }
}

extension Task where Failure == Never {
    /// Waits for the task, cancelling it if the waiting task is cancelled.
    func valueCancellingWithCaller() async -> Success {
        await withTaskCancellationHandler { await value } onCancel: { cancel() }
    }
}
