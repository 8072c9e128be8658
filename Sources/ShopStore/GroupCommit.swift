import GRDB
import GRDBSQLite
import Shop

/// Commits writes in groups: writes that arrive while a transaction is being committed wait for it and
/// then share the next transaction, each inside its own savepoint. A burst of pipelined cart changes
/// then costs one sync of the log instead of one per change, while each write still succeeds or fails on
/// its own — a refused one rolls back only its savepoint — and no caller hears of success before the
/// transaction holding its write is committed and synced.
///
/// Its transaction statements run on SQLite directly (``DirectStatement``): GRDB's transaction observers do
/// not hear of these transactions (the shop registers none).
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
    /// Whether other writes are queued on or running on the writer queue: an inline commit would wait for them
    /// on its thread (and they may wait for another process's lock), so the group goes to the queue instead.
    private let isWriterQueueBusy: @Sendable () -> Bool
    /// Called just before each `COMMIT` (a deferred log sync counts the commit then, before other
    /// connections can read it), and once it has ended, committed or not.
    private let willCommit: @Sendable () -> Void
    private let didCommit: @Sendable () -> Void
    private let queue = Locked(Queue())
    /// What the writes of the transaction under way asked to run once it ends (see ``afterTransaction(_:)``).
    private let transactionEnd = Locked<[@Sendable (_ committed: Bool) -> Void]>([])
    /// What the write under way asked to run once it ends (see ``afterWrite(_:)``).
    private let writeEnd = Locked<[@Sendable (_ kept: Bool) -> Void]>([])
    /// How many inline groups went to the writer queue (see ``handedOffGroups``).
    private let handOffs = Locked(0)

    /// A group commit over `writer`, committing where `placement` says.
    /// - Parameter isWriterQueueBusy: whether writes other than this group commit's are queued on the
    ///   writer's queue now (with the inline placement, a group then goes to the queue behind them).
    /// - Parameters:
    ///   - willCommit: called on the writer just before each `COMMIT`.
    ///   - didCommit: called on the writer once that `COMMIT` has ended, whether it committed or not.
    init(
        writer: any DatabaseWriter, placement: CommitPlacement = .writerQueue, isWriterQueueBusy: @escaping @Sendable () -> Bool = { false },
        willCommit: @escaping @Sendable () -> Void = {}, didCommit: @escaping @Sendable () -> Void = {}
    ) {
        self.writer = writer
        self.placement = placement
        self.isWriterQueueBusy = isWriterQueueBusy
        self.willCommit = willCommit
        self.didCommit = didCommit
    }

    /// Runs `body` once the transaction of the write calling this ends, with whether it committed: called
    /// from a write's body, on the writer (a lighter GRDB `afterNextTransaction`, which installs SQLite hooks
    /// and slowed the writes after it).
    func afterTransaction(_ body: @escaping @Sendable (_ committed: Bool) -> Void) {
        transactionEnd.withLock { $0.append(body) }
    }

    /// Runs `body` once the write calling this ends, with whether its changes stay in its transaction: false
    /// when its savepoint was rolled back, whether the write threw or what ends it failed (its `RELEASE`). Called
    /// from a write's body, on the writer; ``afterTransaction(_:)`` then says whether what stayed committed.
    func afterWrite(_ body: @escaping @Sendable (_ kept: Bool) -> Void) {
        writeEnd.withLock { $0.append(body) }
    }

    /// Runs and forgets what the ended write asked for.
    private func endWrite(kept: Bool) {
        let bodies = writeEnd.withLock { bodies in
            defer { bodies = [] }
            return bodies
        }
        for body in bodies { body(kept) }
    }

    /// Runs and forgets what the ended transaction's writes asked for (and what a write whose end was cut
    /// short by the transaction's failure asked for, as not kept).
    private func endTransaction(committed: Bool) {
        endWrite(kept: false)
        let bodies = transactionEnd.withLock { bodies in
            defer { bodies = [] }
            return bodies
        }
        for body in bodies { body(committed) }
    }

    /// How many writes wait for a group (for tests).
    var waitingCount: Int { queue.withLock { $0.pending.count } }

    /// How many inline groups were committed on the writer queue instead: the write lock was taken, or the
    /// queue had other writes.
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

    /// Commits `group` on this thread without waiting for another connection's write lock, nor for other
    /// writes on the writer queue: when the lock is taken or the queue busy, the group goes to the writer
    /// queue, which waits for them (up to the busy timeout).
    private func commitInline(_ group: [Pending]) {
        guard Self.busyTimeoutMilliseconds(writer.configuration) != nil, !isWriterQueueBusy() else {
            handOffs.withLock { $0 += 1 }
            commitOnWriterQueue(group)
            return
        }
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
        // Only a connection with a busy timeout commits inline (see `commitInline`).
        let busyTimeout = Self.busyTimeoutMilliseconds(db.configuration) ?? 0
        var hasBegun = false
        let transactionBegan = {
            hasBegun = true
            if !waitingForLock { sqlite3_busy_timeout(db.sqliteConnection, busyTimeout) }
        }
        if !waitingForLock { sqlite3_busy_timeout(db.sqliteConnection, 0) }
        defer { if !hasBegun && !waitingForLock { sqlite3_busy_timeout(db.sqliteConnection, busyTimeout) } }
        do {
            let errors = group.count == 1
                ? [try commitAlone(group[0], db, began: transactionBegan)]
                : try commitTogether(group, db, began: transactionBegan)
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

    /// The busy timeout of a connection opened with `configuration`, in milliseconds (restored after an
    /// inline commit's `BEGIN`); nil for a busy callback, which an inline commit would erase.
    private static func busyTimeoutMilliseconds(_ configuration: Configuration) -> Int32? {
        switch configuration.busyMode {
        case .timeout(let seconds): Int32(clamping: Int((seconds * 1_000).rounded()))
        case .immediateError: 0
        case .callback: nil
        }
    }

    /// Commits one write in a transaction of its own; returns the error that made it roll back, if any.
    /// A lone write needs no savepoint (its failure rolls back a transaction that holds nothing else):
    /// `SAVEPOINT` and `RELEASE` were a tenth of the instructions of a cart change's write.
    /// - Parameter began: called once the transaction has begun, before the write runs.
    /// - Throws: the database error that made the transaction fail.
    private func commitAlone(_ pending: Pending, _ db: Database, began: () -> Void) throws -> (any Error)? {
        try Self.inTransaction(db, began: began, willCommit: willCommit, didCommit: didCommit) {
            do {
                try pending.run(db)
                endWrite(kept: true)
                return [nil]
            } catch {
                endWrite(kept: false)
                return [error]
            }
        }[0]
    }

    /// Commits several writes in one transaction, each in a savepoint; returns each one's error, if any.
    /// - Parameter began: called once the transaction has begun, before the writes run.
    /// - Throws: the database error that made the whole transaction fail.
    private func commitTogether(_ group: [Pending], _ db: Database, began: () -> Void) throws -> [(any Error)?] {
        try Self.inTransaction(db, began: began, willCommit: willCommit, didCommit: didCommit) {
            try group.map { pending in
                try DirectStatement(db, Statements.savepoint).execute([])
                do {
                    try pending.run(db)
                    try DirectStatement(db, Statements.release).execute([])
                    endWrite(kept: true)
                    return nil
                } catch {
                    try DirectStatement(db, Statements.rollbackToSavepoint).execute([])
                    try DirectStatement(db, Statements.release).execute([])
                    endWrite(kept: false)
                    return error
                }
            }
        }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction, committed unless every write failed (a lone write that
    /// failed is rolled back), with statements compiled once per connection: GRDB's `inTransaction`
    /// compiles `BEGIN` and `COMMIT` each time (~40k instructions of a cart change).
    /// `willCommit` runs just before `COMMIT`, `didCommit` once it has ended.
    /// - Throws: the error of `BEGIN`, or of `body` or `COMMIT`, after which the transaction is rolled back.
    private static func inTransaction(
        _ db: Database, began: () -> Void, willCommit: () -> Void, didCommit: () -> Void, _ body: () throws -> [(any Error)?]
    ) throws -> [(any Error)?] {
        try DirectStatement(db, Statements.begin).execute([])
        began()
        do {
            let errors = try body()
            if errors.count == 1, errors[0] != nil {
                try DirectStatement(db, Statements.rollback).execute([])
            } else {
                willCommit()
                defer { didCommit() }
                try DirectStatement(db, Statements.commit).execute([])
            }
            return errors
        } catch {
            // SQLite rolls some failures back by itself (a full disk, say); otherwise roll back here.
            if db.isInsideTransaction { try? DirectStatement(db, Statements.rollback).execute([]) }
            throw error
        }
    }

    /// The transaction statements a group commit runs.
    private enum Statements {
        static let begin = StatementSQL("BEGIN IMMEDIATE")
        static let commit = StatementSQL("COMMIT")
        static let rollback = StatementSQL("ROLLBACK")
        static let savepoint = StatementSQL("SAVEPOINT group_write")
        static let release = StatementSQL("RELEASE group_write")
        static let rollbackToSavepoint = StatementSQL("ROLLBACK TO group_write")
    }
}

/// Where a write leaves its result until its group commits (written and read on the writer's queue).
private final class ResultSlot<T>: @unchecked Sendable {
    var value: T?
}
