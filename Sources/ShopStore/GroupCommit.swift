import GRDB
import Shop

/// Commits writes in groups: writes that arrive while a transaction is being committed wait for it and
/// then share the next transaction, each inside its own savepoint. A burst of pipelined cart changes
/// then costs one sync of the log instead of one per change, while each write still succeeds or fails on
/// its own — a refused one rolls back only its savepoint — and no caller hears of success before the
/// transaction holding its write is committed and synced.
///
/// A lone write is not delayed: with nothing committing, it starts at once.
///
/// ```swift
/// let cart = try await groupCommit.write { db in
///     try db.execute(sql: "UPDATE cart_line SET quantity = 2 WHERE productId = ?", arguments: ["p-0001"])
///     return try StoredRows.cart(db)
/// }
/// ```
final class GroupCommit: Sendable {
    /// The most writes one transaction takes, so a burst cannot hold the write lock for long.
    static let maximumGroupSize = 256

    private struct Pending: Sendable {
        /// Runs the write and keeps its result for `finish`.
        let run: @Sendable (Database) throws -> Void
        /// Resumes the caller: with the kept result when `nil`, else with the error.
        let finish: @Sendable (_ error: (any Error)?) -> Void
    }

    private struct Queue {
        var pending: [Pending] = []
        var isCommitting = false
    }

    private let writer: any DatabaseWriter
    private let queue = Locked(Queue())
    /// What the writes of the transaction under way asked to run once it ends (see ``afterTransaction(_:)``).
    private let transactionEnd = Locked<[@Sendable (_ committed: Bool) -> Void]>([])

    init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// Runs `body` once the transaction of the write calling this ends, with whether it committed: called
    /// from a write's body, on the writer (a lighter GRDB `afterNextTransaction`, which installs SQLite hooks
    /// and slowed the writes after it).
    func afterTransaction(_ body: @escaping @Sendable (_ committed: Bool) -> Void) {
        transactionEnd.withLock { $0.append(body) }
    }

    /// Runs and forgets what the ended transaction's writes asked for.
    private func endTransaction(committed: Bool) {
        let bodies = transactionEnd.withLock { bodies in
            defer { bodies = [] }
            return bodies
        }
        for body in bodies { body(committed) }
    }

    /// How many writes wait for a group (for tests).
    var waitingCount: Int { queue.withLock { $0.pending.count } }

    /// Runs `body` in a savepoint of the next group's `BEGIN IMMEDIATE` transaction and returns its
    /// result once that transaction is committed.
    /// - Throws: What `body` throws (its changes are rolled back, the group's others are not), or the
    ///   database error that made the whole group's transaction fail.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let result = ResultSlot<T>()
            let pending = Pending(
                run: { db in result.value = try body(db) },
                finish: { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: result.value!) }
                })
            let startsGroup = queue.withLock { queue in
                queue.pending.append(pending)
                guard !queue.isCommitting else { return false }
                queue.isCommitting = true
                return true
            }
            if startsGroup { commitNextGroup() }
        }
    }

    /// Takes the waiting writes (up to the maximum) and commits them together; when done, starts the
    /// group that gathered meanwhile, or stops when none did.
    private func commitNextGroup() {
        let group = queue.withLock { queue -> [Pending] in
            let group = Array(queue.pending.prefix(Self.maximumGroupSize))
            queue.pending.removeFirst(group.count)
            if group.isEmpty { queue.isCommitting = false }
            return group
        }
        guard !group.isEmpty else { return }
        writer.asyncWriteWithoutTransaction { db in
            var errors: [(any Error)?]
            do {
                errors = group.count == 1 ? [try Self.commitAlone(group[0], db)] : try Self.commitTogether(group, db)
                // A lone write that failed rolled its transaction back; a group commits even if some failed.
                self.endTransaction(committed: group.count > 1 || errors[0] == nil)
            } catch {
                errors = Array(repeating: error, count: group.count)
                self.endTransaction(committed: false)
            }
            for (pending, error) in zip(group, errors) { pending.finish(error) }
            self.commitNextGroup()
        }
    }

    /// Commits one write in a transaction of its own; returns the error that made it roll back, if any.
    /// A lone write needs no savepoint (its failure rolls back a transaction that holds nothing else):
    /// `SAVEPOINT` and `RELEASE` were a tenth of the instructions of a cart change's write.
    /// - Throws: the database error that made the transaction fail.
    private static func commitAlone(_ pending: Pending, _ db: Database) throws -> (any Error)? {
        var failure: (any Error)?
        try db.inTransaction(.immediate) {
            do {
                try pending.run(db)
                return .commit
            } catch {
                failure = error
                return .rollback
            }
        }
        return failure
    }

    /// Commits several writes in one transaction, each in a savepoint; returns each one's error, if any.
    /// - Throws: the database error that made the whole transaction fail.
    private static func commitTogether(_ group: [Pending], _ db: Database) throws -> [(any Error)?] {
        var errors: [(any Error)?] = []
        try db.inTransaction(.immediate) {
            errors = group.map { pending in
                do {
                    try db.inSavepoint {
                        try pending.run(db)
                        return .commit
                    }
                    return nil
                } catch {
                    return error
                }
            }
            return .commit
        }
        return errors
    }
}

/// Where a write leaves its result until its group commits (written and read on the writer's queue).
private final class ResultSlot<T>: @unchecked Sendable {
    var value: T?
}
