import Dispatch
import Foundation
import GRDB
import GRDBSQLite
import Shop
import Testing
@testable import ShopStore

/// Writes that wait for a commit share the next transaction; each still succeeds or fails alone.
@Suite struct GroupCommitTests {
    /// Counts committed transactions, with SQLite's commit hook (the group commit runs its transaction
    /// statements on SQLite directly, so GRDB's transaction observers do not hear of them).
    final class CommitCounter: @unchecked Sendable {
        private let count = Locked(0)
        var commits: Int { count.withLock { $0 } }

        /// Starts counting the commits of `writer`'s connection.
        func install(on writer: some DatabaseWriter) throws {
            try writer.writeWithoutTransaction { db in
                sqlite3_commit_hook(db.sqliteConnection, { context in
                    Unmanaged<CommitCounter>.fromOpaque(context!).takeUnretainedValue().count.withLock { $0 += 1 }
                    return 0
                }, Unmanaged.passUnretained(self).toOpaque())
            }
        }
    }

    struct Refused: Error, Equatable {}

    let writer: DatabaseQueue
    let commits = CommitCounter()
    let group: GroupCommit

    init() throws {
        writer = try DatabaseQueue()
        try writer.write { db in
            try db.execute(sql: "CREATE TABLE item (name TEXT NOT NULL UNIQUE)")
        }
        try commits.install(on: writer)
        group = GroupCommit(writer: writer)
    }

    /// Holds the writer busy until the returned semaphore is signalled, so that writes queue up.
    func occupyWriter() async -> DispatchSemaphore {
        let release = DispatchSemaphore(value: 0)
        await withCheckedContinuation { (started: CheckedContinuation<Void, Never>) in
            writer.asyncWriteWithoutTransaction { _ in
                started.resume()
                release.wait()
            }
        }
        return release
    }

    func insert(_ name: String) async throws -> Int {
        try await group.write { db in
            try db.execute(sql: "INSERT INTO item (name) VALUES (?)", arguments: [name])
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0
        }
    }

    @Test func aLoneWriteCommitsAtOnce() async throws {
        #expect(try await insert("a") == 1)
        #expect(commits.commits == 1)
    }

    @Test func writesThatWaitShareOneTransaction() async throws {
        let release = await occupyWriter()
        // The first write starts a group (queued behind the occupied writer); the next ones wait for it.
        let results = try await withThrowingTaskGroup(of: Int.self) { tasks in
            for index in 0..<20 {
                tasks.addTask { try await insert("item \(index)") }
            }
            try await waitUntilQueued(19)  // The first took its group at once.
            release.signal()
            return try await tasks.reduce(into: []) { $0.append($1) }
        }
        #expect(results.sorted() == Array(1...20))
        #expect(commits.commits == 2)  // The first write's group, then one for the 19 that waited.
        #expect(try await writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM item") } == 20)
    }

    @Test func aFailingWriteRollsBackAloneAndTheOthersCommit() async throws {
        _ = try await insert("taken")
        let release = await occupyWriter()
        let first = Task { try await insert("one") }
        let refused = Task { try await insert("taken") }  // UNIQUE constraint: fails inside its savepoint.
        let second = Task { try await insert("two") }
        try await waitUntilQueued(2)
        release.signal()
        _ = try await (first.value, second.value)
        await #expect(throws: DatabaseError.self) { try await refused.value }
        let names = try await writer.read { try String.fetchAll($0, sql: "SELECT name FROM item ORDER BY name") }
        #expect(names == ["one", "taken", "two"])
    }

    @Test func anErrorOfTheWriteItselfReachesItsCaller() async throws {
        await #expect(throws: Refused.self) {
            try await group.write { db -> Int in
                try db.execute(sql: "INSERT INTO item (name) VALUES ('rolled back')")
                throw Refused()
            }
        }
        #expect(try await writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM item") } == 0)
    }

    @Test func aLoneWriteThatFailsLeavesNoTransactionOpenForTheNext() async throws {
        await #expect(throws: DatabaseError.self) {
            _ = try await insert("a")
            _ = try await insert("a")  // UNIQUE constraint: a lone write, rolled back without a savepoint.
        }
        #expect(try await insert("b") == 2)
        #expect(commits.commits == 2)
        #expect(try await writer.read { try String.fetchAll($0, sql: "SELECT name FROM item ORDER BY name") } == ["a", "b"])
    }

    // MARK: Inline commits

    /// The inline placement's scheduler: keeps the jobs until the test runs them, on its own thread.
    final class HeldJobs: Sendable {
        private let jobs = Locked<[@Sendable () -> Void]>([])
        var placement: CommitPlacement { .inline { [jobs] job in jobs.withLock { $0.append(job) } } }
        var count: Int { jobs.withLock { $0.count } }

        /// Runs the jobs scheduled so far and those they schedule, in order.
        func runAll() {
            while let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { job() }
        }
    }

    @Test func inlineWritesAskedForBeforeTheirTurnEndsShareOneTransaction() async throws {
        let jobs = HeldJobs()
        let inline = GroupCommit(writer: writer, placement: jobs.placement)
        let results = try await withThrowingTaskGroup(of: Int.self) { tasks in
            for index in 0..<20 {
                tasks.addTask {
                    try await inline.write { db in
                        try db.execute(sql: "INSERT INTO item (name) VALUES (?)", arguments: ["item \(index)"])
                        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0
                    }
                }
            }
            while inline.waitingCount < 20 { await Task.yield() }
            #expect(jobs.count == 1)  // The first write scheduled the commit; the others joined its group.
            jobs.runAll()
            return try await tasks.reduce(into: []) { $0.append($1) }
        }
        #expect(results.sorted() == Array(1...20))
        #expect(commits.commits == 1)
        #expect(inline.handedOffGroups == 0)
    }

    /// What a write asks to run when it ends learns whether its changes stayed: in a group, a write that
    /// fails is rolled back to its savepoint while the others commit; alone, its transaction is rolled back.
    @Test func aWriteLearnsWhetherItsChangesStayed() async throws {
        let ends = Locked<[String]>([])
        let jobs = HeldJobs()
        let inline = GroupCommit(writer: writer, placement: jobs.placement)
        func write(_ name: String, failing: Bool) -> Task<Void, any Error> {
            Task {
                try await inline.write { db in
                    inline.afterWrite { kept in ends.withLock { $0.append("\(name) \(kept ? "kept" : "rolled back")") } }
                    try db.execute(sql: "INSERT INTO item (name) VALUES (?)", arguments: [name])
                    if failing { throw Refused() }
                }
            }
        }
        let writes = [write("first", failing: false), write("second", failing: true), write("third", failing: false)]
        while inline.waitingCount < writes.count { await Task.yield() }
        #expect(jobs.count == 1)  // One group.
        jobs.runAll()
        for (index, write) in writes.enumerated() {
            if index == 1 { await #expect(throws: Refused.self) { try await write.value } } else { try await write.value }
        }
        let alone = write("alone", failing: true)
        while inline.waitingCount < 1 { await Task.yield() }
        jobs.runAll()
        await #expect(throws: Refused.self) { try await alone.value }
        #expect(Set(ends.withLock { $0 }) == ["first kept", "second rolled back", "third kept", "alone rolled back"])
        #expect(try await writer.read { try String.fetchAll($0, sql: "SELECT name FROM item ORDER BY name") } == ["first", "third"])
    }

    @Test func anInlineCommitThatFindsTheWriteLockTakenHandsItsGroupToTheWriterQueue() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("group-commit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("shop.sqlite").path
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        let pool = try DatabasePool(path: path, configuration: configuration)
        try await pool.write { try $0.execute(sql: "CREATE TABLE item (name TEXT NOT NULL)") }
        let jobs = HeldJobs()
        let inline = GroupCommit(writer: pool, placement: jobs.placement)

        // Another connection (another process, say) holds the write lock.
        var other: OpaquePointer?
        #expect(sqlite3_open_v2(path, &other, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close(other) }
        #expect(sqlite3_exec(other, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)

        let write = Task {
            try await inline.write { db in
                try db.execute(sql: "INSERT INTO item (name) VALUES ('waited')")
                return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0
            }
        }
        while inline.waitingCount < 1 { await Task.yield() }
        jobs.runAll()  // Returns at once: the group went to the writer queue, which waits for the lock.
        #expect(inline.handedOffGroups == 1)
        #expect(sqlite3_exec(other, "INSERT INTO item (name) VALUES ('other')", nil, nil, nil) == SQLITE_OK)
        #expect(sqlite3_exec(other, "COMMIT", nil, nil, nil) == SQLITE_OK)
        // Had the inline attempt left the busy timeout lifted, this would fail with SQLITE_BUSY.
        #expect(try await write.value == 2)

        // With the lock free again, the next group commits inline.
        let next = Task { try await inline.write { db in try db.execute(sql: "INSERT INTO item (name) VALUES ('inline')") } }
        while inline.waitingCount < 1 { await Task.yield() }
        jobs.runAll()
        try await next.value
        #expect(inline.handedOffGroups == 1)
        #expect(try await pool.read { try String.fetchAll($0, sql: "SELECT name FROM item ORDER BY rowid") } == ["other", "waited", "inline"])
    }

    @Test func anInlineGroupGoesToTheWriterQueueWhileOtherWritesAreQueuedThere() async throws {
        let jobs = HeldJobs()
        let busy = Locked(true)
        let inline = GroupCommit(writer: writer, placement: jobs.placement, isWriterQueueBusy: { busy.withLock { $0 } })
        let first = Task { try await inline.write { db in try db.execute(sql: "INSERT INTO item (name) VALUES ('queued')") } }
        while inline.waitingCount < 1 { await Task.yield() }
        jobs.runAll()
        try await first.value
        #expect(inline.handedOffGroups == 1)
        busy.withLock { $0 = false }
        let second = Task { try await inline.write { db in try db.execute(sql: "INSERT INTO item (name) VALUES ('inline')") } }
        while inline.waitingCount < 1 { await Task.yield() }
        jobs.runAll()
        try await second.value
        #expect(inline.handedOffGroups == 1)
        #expect(commits.commits == 2)
    }

    @Test func aFailingInlineWriteRollsBackAloneAndTheOthersCommit() async throws {
        _ = try await insert("taken")
        let jobs = HeldJobs()
        let inline = GroupCommit(writer: writer, placement: jobs.placement)
        func insertInline(_ name: String) -> Task<Void, any Error> {
            Task { try await inline.write { db in try db.execute(sql: "INSERT INTO item (name) VALUES (?)", arguments: [name]) } }
        }
        let first = insertInline("one")
        let refused = insertInline("taken")
        let second = insertInline("two")
        while inline.waitingCount < 3 { await Task.yield() }
        jobs.runAll()
        _ = try await (first.value, second.value)
        await #expect(throws: DatabaseError.self) { try await refused.value }
        let names = try await writer.read { try String.fetchAll($0, sql: "SELECT name FROM item ORDER BY name") }
        #expect(names == ["one", "taken", "two"])
    }

    /// Waits (without sleeping: by yielding) until `count` writes are queued behind the occupied writer.
    func waitUntilQueued(_ count: Int) async throws {
        while group.waitingCount < count { await Task.yield() }
    }
}
