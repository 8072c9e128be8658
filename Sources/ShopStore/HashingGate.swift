/// Bounds how many password hashes run at once in this process.
///
/// Each Argon2id hash holds 64 MiB while it runs (``Credentials/PasswordHasher/Cost/standard``): a client
/// that opened many sign-in screens and sent a burst of attempts would otherwise make the server take
/// gigabytes. Waiters are served in arrival order.
package actor HashingGate {
    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// A gate letting `limit` hashes run at once.
    package init(limit: Int) {
        self.limit = limit
    }

    /// Runs `work` once fewer than `limit` others run.
    package func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async rethrows -> T {
        if running >= limit {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            running += 1
        }
        defer {
            if waiting.isEmpty { running -= 1 } else { waiting.removeFirst().resume() }
        }
        return try await Self.offExecutor(work)
    }

    /// Runs CPU-heavy work on the global executor, not the actor's or the caller's, even for a task that
    /// prefers another executor (the server's main-queue executor would run it on the main thread).
    @concurrent
    private static func offExecutor<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async rethrows -> T {
        try await withTaskExecutorPreference(globalConcurrentExecutor) { try work() }
    }
}
