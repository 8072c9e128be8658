import GRDB
import GRDBSQLite
import Shop

/// Commits writes in groups: writes that arrive while a transaction is being committed wait for it and
/// then share the next transaction, each inside its own savepoint. A burst of pipelined cart changes
/// then costs one sync of the log instead of one per change, while each write still succeeds or fails on
/// its own — a refused one rolls back only its savepoint — and no caller hears of success before the
/// transaction holding its write is committed and synced.
///
/// A lone write is not delayed: with nothing committing, it starts at once (on the writer queue), or at the end
/// of the current turn of the thread that commits inline (see ``CommitPlacement``).
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
    private let placement: CommitPlacement
    private let queue = Locked(Queue())
    /// What the writes of the transaction under way asked to run once it ends (see ``afterTransaction(_:)``).
    private let transactionEnd = Locked<[@Sendable (_ committed: Bool) -> Void]>([])
    /// How many groups were handed to the writer queue because another connection held the write lock
    /// when an inline commit began (for tests and profiles).
    private let handOffs = Locked(0)

    /// A group commit over `writer`, committing where `placement` says.
    init(writer: any DatabaseWriter, placement: CommitPlacement = .writerQueue) {
        self.writer = writer
        self.placement = placement
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

    /// How many inline groups found the write lock taken and were committed on the writer queue instead.
    var handedOffGroups: Int { handOffs.withLock { $0 } }

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

    /// Commits the writes waiting now, where the placement says; when done, the group that gathered
    /// meanwhile follows, or the commits stop when none did.
    private func commitNextGroup() {
        switch placement {
        case .writerQueue:
            guard let group = takeGroup() else { return }
            commitOnWriterQueue(group)
        case .inline(let schedule):
            schedule { [self] in
                guard let group = takeGroup() else { return }
                commitInline(group)
            }
        }
    }

    /// Takes the waiting writes (up to the maximum), or ends the commits when none wait.
    private func takeGroup() -> [Pending]? {
        queue.withLock { queue -> [Pending]? in
            let group = Array(queue.pending.prefix(Self.maximumGroupSize))
            queue.pending.removeFirst(group.count)
            if group.isEmpty { queue.isCommitting = false }
            return group.isEmpty ? nil : group
        }
    }

    /// How a group's transaction ended.
    private enum Outcome {
        /// It ran: each write's error, if any, in the group's order.
        case ran([(any Error)?])
        /// Another connection held the write lock, and the commit was not to wait for it: nothing ran.
        case lockTaken
    }

    /// Commits `group` on the writer's queue, waiting for the write lock, then goes on with the next.
    private func commitOnWriterQueue(_ group: [Pending]) {
        writer.asyncWriteWithoutTransaction { db in
            guard case .ran(let errors) = self.commit(group, db, waitingForLock: true) else {
                preconditionFailure("a commit that waits for the write lock runs")
            }
            self.finish(group, errors)
        }
    }

    /// Commits `group` on this thread without waiting for another connection's write lock: when the lock
    /// is taken, the group goes to the writer queue, which waits for it (up to the busy timeout).
    private func commitInline(_ group: [Pending]) {
        switch writer.writeWithoutTransaction({ db in commit(group, db, waitingForLock: false) }) {
        case .ran(let errors):
            finish(group, errors)
        case .lockTaken:
            handOffs.withLock { $0 += 1 }
            commitOnWriterQueue(group)
        }
    }

    /// Resumes the group's callers with their outcomes, then commits the next group.
    private func finish(_ group: [Pending], _ errors: [(any Error)?]) {
        for (pending, error) in zip(group, errors) { pending.finish(error) }
        commitNextGroup()
    }

    /// Commits `group` in one transaction. Unless `waitingForLock`, `BEGIN` fails at once when another
    /// connection holds the write lock (the busy timeout is lifted for it and put back as soon as the
    /// transaction has begun, so the writes' own statements wait as usual).
    private func commit(_ group: [Pending], _ db: Database, waitingForLock: Bool) -> Outcome {
        let busyTimeout = Self.busyTimeoutMilliseconds(db)
        var hasBegun = false
        let transactionBegan = {
            hasBegun = true
            if !waitingForLock { sqlite3_busy_timeout(db.sqliteConnection, busyTimeout) }
        }
        if !waitingForLock { sqlite3_busy_timeout(db.sqliteConnection, 0) }
        defer { if !hasBegun && !waitingForLock { sqlite3_busy_timeout(db.sqliteConnection, busyTimeout) } }
        do {
            let errors = group.count == 1
                ? [try Self.commitAlone(group[0], db, began: transactionBegan)]
                : try Self.commitTogether(group, db, began: transactionBegan)
            // A lone write that failed rolled its transaction back; a group commits even if some failed.
            endTransaction(committed: group.count > 1 || errors[0] == nil)
            return .ran(errors)
        } catch let error as DatabaseError where !hasBegun && !waitingForLock && error.resultCode == .SQLITE_BUSY {
            return .lockTaken
        } catch {
            endTransaction(committed: false)
            return .ran(Array(repeating: error, count: group.count))
        }
    }

    /// The busy timeout `db` was opened with, in milliseconds (restored after an inline commit's `BEGIN`).
    private static func busyTimeoutMilliseconds(_ db: Database) -> Int32 {
        switch db.configuration.busyMode {
        case .timeout(let seconds): Int32(clamping: Int((seconds * 1_000).rounded()))
        case .immediateError, .callback: 0
        }
    }

    /// Commits one write in a transaction of its own; returns the error that made it roll back, if any.
    /// A lone write needs no savepoint (its failure rolls back a transaction that holds nothing else):
    /// `SAVEPOINT` and `RELEASE` were a tenth of the instructions of a cart change's write.
    /// - Parameter began: called once the transaction has begun, before the write runs.
    /// - Throws: the database error that made the transaction fail.
    private static func commitAlone(_ pending: Pending, _ db: Database, began: () -> Void) throws -> (any Error)? {
        var failure: (any Error)?
        try db.inTransaction(.immediate) {
            began()
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
    /// - Parameter began: called once the transaction has begun, before the writes run.
    /// - Throws: the database error that made the whole transaction fail.
    private static func commitTogether(_ group: [Pending], _ db: Database, began: () -> Void) throws -> [(any Error)?] {
        var errors: [(any Error)?] = []
        try db.inTransaction(.immediate) {
            began()
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
