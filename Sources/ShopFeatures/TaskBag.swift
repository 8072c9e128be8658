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

/// A task on the main actor whose result the code that started it awaits on the main actor too.
///
/// Awaiting `Task.value` leaves the caller's actor: the getter is not isolated to its caller, so the waiting
/// task moves to the global pool to wait and, once the value is there, back to the main actor: two thread
/// wake-ups per action, on the path between its stored change and its answer. Here the task hands its
/// result to a continuation the waiter suspended on the main actor.
@MainActor
final class MainActorTask<Success: Sendable> {
    /// The task running the operation (to cancel when the screen closes).
    private(set) var task: Task<Void, Never>?
    private var result: Success?
    private var waiter: CheckedContinuation<Success, Never>?

    /// Starts `operation` as a task on the main actor, preferring `taskExecutor` (see
    /// ``ShopSession/taskExecutor``).
    init(executorPreference taskExecutor: (any TaskExecutor)? = nil, _ operation: @escaping @MainActor () async -> Success) {
        if let taskExecutor {
            task = Task(executorPreference: taskExecutor) { [self] in await finish(await operation()) }
        } else {
            task = Task { @MainActor in self.finish(await operation()) }
        }
    }

    /// Cancels the task.
    func cancel() {
        task?.cancel()
    }

    /// Waits for the result, cancelling the task if the waiting task is cancelled.
    func valueCancellingWithCaller() async -> Success {
        await withTaskCancellationHandler { await value } onCancel: { [task] in task?.cancel() }
    }

    /// The result, once the operation has returned it. One waiter at a time (the code that started the task):
    /// a second would take the first one's place.
    var value: Success {
        get async {
            if let result { return result }
            return await withCheckedContinuation { waiter = $0 }
        }
    }

    private func finish(_ result: Success) {
        self.result = result
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: result)
        }
    }
}
