import CFileWriteback
import Foundation
import GRDB
import Shop
import Synchronization
import Testing
@testable import ShopStore

/// ``WriteAheadLogSync``: the writer commits without syncing, every commit (whatever wrote it) takes a
/// generation before another connection can read it, and `pass` syncs the log SQLite writes once for all of them.
@Suite struct WriteAheadLogSyncTests {
    /// The descriptors a stand-in syncer (or writeback) was asked to sync.
    final class Syncs: Sendable {
        let descriptors = Mutex<[Int32]>([])
        func withLock<T>(_ body: (inout [Int32]) -> T) -> T { descriptors.withLock { body(&$0) } }

        /// A stand-in that records each descriptor it is given and succeeds.
        var recorder: WriteAheadLogSync.Syncer {
            { descriptor in
                self.withLock { $0.append(descriptor) }
                return 0
            }
        }
    }

    /// A pool on a new file at `path` whose writer commits through a sync that records what it is asked to sync, and,
    /// given `writebacks`, records the writebacks of its log there instead of starting them.
    static func pool(at path: String, syncs: Syncs, writebacks: Syncs? = nil) throws -> (DatabasePool, WriteAheadLogSync) {
        let pool = try DatabasePool(path: path)
        let started: WriteAheadLogSync.Writeback = { fw_start_writeback($0) }
        let sync = WriteAheadLogSync(syncer: syncs.recorder, writeback: writebacks?.recorder ?? started)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE t (x INTEGER)")
            try sync.install(on: db)
        }
        return (pool, sync)
    }

    /// Whether `descriptor` is the file at `path`.
    static func isFile(_ descriptor: Int32, at path: String) -> Bool {
        var open = stat()
        var named = stat()
        return fstat(descriptor, &open) == 0 && stat(path, &named) == 0 && open.st_ino == named.st_ino && open.st_dev == named.st_dev
    }

    @Test func eachCommitTakesAGenerationThatOnePassSyncs() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(at: folder.databasePath, syncs: syncs)
        #expect(sync.required == 0)
        try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
        try pool.writeWithoutTransaction { try $0.execute(sql: "INSERT INTO t VALUES (2)") }  // autocommit too
        #expect(sync.required == 2)  // the WAL hook's count: after each commit
        #expect(sync.reached == 0)
        #expect(syncs.withLock { $0.isEmpty })  // committed, not synced
        sync.pass()
        #expect(sync.reached == 2)
        #expect(syncs.withLock { $0.count } == 1)
        sync.pass()  // nothing new: no sync
        #expect(syncs.withLock { $0.count } == 1)
        // A read commits nothing.
        _ = try pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") }
        #expect(sync.required == 2)
    }

    @Test func theWriterCommitsWithoutSyncingAndItsLogIsWhatIsSynced() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(at: folder.databasePath, syncs: syncs)
        #expect(try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 1)  // NORMAL
        try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
        sync.pass()
        let descriptor = try #require(syncs.withLock { $0.first })
        #expect(Self.isFile(descriptor, at: folder.databasePath + "-wal"))
    }

    @Test func theLogSyncedIsTheOneSQLiteWritesBesideTheFileALinkNames() throws {
        let folder = try TemporaryFolder()
        let links = try TemporaryFolder()
        let link = links.databasePath
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: folder.databasePath)
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(at: link, syncs: syncs)
        try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
        sync.pass()
        #expect(!FileManager.default.fileExists(atPath: link + "-wal"))
        let descriptor = try #require(syncs.withLock { $0.first })
        #expect(Self.isFile(descriptor, at: folder.databasePath + "-wal"))
    }

    @Test func aRequestedSyncIsOneMoreGeneration() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(at: folder.databasePath, syncs: syncs)
        sync.requestSync()
        #expect(sync.required == 1)
        sync.pass()
        #expect(sync.reached == 1)
        #expect(syncs.withLock { $0.count } == 1)
        withExtendedLifetime(pool) {}
    }

    @Test func theLogIsStillCheckpointedAutomatically() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(at: folder.databasePath, syncs: syncs)
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_autocheckpoint = 10") }
        // The hook read the limit when it was installed (1 000 pages), and the pragma replaced it: install again.
        try pool.writeWithoutTransaction { try sync.install(on: $0) }
        for value in 0..<40 { try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (?)", arguments: [value]) } }
        // Checkpointed: the log restarts from its start rather than growing by a page per commit.
        let pages = try pool.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")! }
        let logPages: Int = pages[1]
        #expect(logPages < 20)
        #expect(sync.required == 40)  // `PRAGMA wal_checkpoint` commits nothing
    }

    @Test func aCommitStartsTheLogsWritebackOncePerSyncWhileItsConditionHolds() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let writebacks = Syncs()
        let (pool, sync) = try Self.pool(at: folder.databasePath, syncs: syncs, writebacks: writebacks)
        let insert = { try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") } }
        // No condition given: no commit starts one.
        try insert()
        #expect(writebacks.withLock { $0.isEmpty })
        let holds = Atomic<Bool>(true)
        sync.startWritebackAfterCommits(when: { holds.load(ordering: .relaxed) })
        try insert()
        let descriptor = try #require(writebacks.withLock { $0.first })
        #expect(Self.isFile(descriptor, at: folder.databasePath + "-wal"))
        // The next commit before a sync starts none: its pages go with the sync's writes.
        try insert()
        #expect(writebacks.withLock { $0.count } == 1)
        sync.pass()
        try insert()
        #expect(writebacks.withLock { $0.count } == 2)
        // While the condition does not hold (in the server: several requests in flight, or none, for a background
        // write), none; and such a commit leaves the next one, with no sync between, free to start it.
        holds.store(false, ordering: .relaxed)
        sync.pass()
        try insert()
        #expect(writebacks.withLock { $0.count } == 2)
        holds.store(true, ordering: .relaxed)
        try insert()
        #expect(writebacks.withLock { $0.count } == 3)
        // The writebacks are no syncs: only `pass` syncs, and counts.
        #expect(syncs.withLock { $0.count } == 2)
        #expect(sync.reached < sync.required)
    }

    #if os(Linux)
    @Test func theSystemStartsALogsWritebackWithoutWriteAccess() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, _) = try Self.pool(at: folder.databasePath, syncs: syncs)
        try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
        // The log as `install` opens it: read-only.
        let descriptor = open(folder.databasePath + "-wal", O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        #expect(fw_start_writeback(descriptor) == 0)
        #expect(fw_start_writeback(-1) == EBADF)
    }
    #endif

    @Test func aSyncDuringACommitUnderWayDoesNotPassIt() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(at: folder.databasePath, syncs: syncs)
        sync.requestSync()
        sync.willCommit()  // its pages perhaps not yet written when the sync below starts
        #expect(sync.required == 2)
        sync.pass()
        #expect(sync.reached == 1)  // what came before it, not it
        sync.didCommit()
        sync.pass()
        #expect(sync.reached == 2)
        #expect(syncs.withLock { $0.count } == 2)
        withExtendedLifetime(pool) {}
    }

    @Test func theGroupCommitCountsACommitBeforeAnotherConnectionCanReadIt() async throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(at: folder.databasePath, syncs: syncs)
        let seen = Mutex<[Int]>([])
        let commits = GroupCommit(writer: pool, willCommit: {
            sync.willCommit()
            // What another connection reads at that moment: not yet the row.
            let rows = (try? pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") }) ?? -1
            seen.withLock { $0.append(rows) }
        }, didCommit: { sync.didCommit() })
        try await commits.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        #expect(seen.withLock { $0 } == [0])
        #expect(sync.required == 2)  // before the commit, and the WAL hook's after it
        sync.pass()
        #expect(sync.reached == 2)  // ended: passed
    }

    @Test func aServersDatabaseOpenedToDeferTheSyncCountsItsWrites() async throws {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.databasePath, logSyncing: .deferred)
        let sync = try #require(database.logSync)
        let services = ShopServices.testing(database)
        sync.pass()
        let before = sync.required
        _ = try await services.cart.add(productId: "p-0001", quantity: 1, for: .guest("g-sync"))
        #expect(sync.required > before)
        #expect(sync.reached < sync.required)
        sync.pass()
        #expect(sync.reached == sync.required)
        // A write on the writer queue is counted too.
        try await database.write { db in try db.execute(sql: "DELETE FROM cart_line") }
        #expect(sync.reached < sync.required)
        // By default each commit syncs the log itself, and nothing is deferred.
        let other = try TemporaryFolder()
        #expect(try ShopDatabase(path: other.databasePath).logSync == nil)
    }

    @Test func anotherWritesOutcomeReplayedWaitsForASync() async throws {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.databasePath, logSyncing: .deferred)
        let sync = try #require(database.logSync)
        let key = IdempotencyKey(key: "k-1", fingerprint: "f")
        try await database.write { db in try IdempotencyRecord.record(db, key, at: Date()) }
        sync.pass()
        let service = LiveIdempotencyService(database: database, feed: ChangeFeed(database: database, events: ShopEvents()))
        #expect(try await service.record(of: "k-2") == nil)
        #expect(sync.reached == sync.required)  // nothing found: nothing to wait for
        #expect(try await service.record(of: "k-1") != nil)
        #expect(sync.reached < sync.required)
    }

    @Test func otherProcessesEntriesReadFromTheLogWaitForASync() async throws {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.databasePath, logSyncing: .deferred)
        let sync = try #require(database.logSync)
        let seq = try await database.write { db in try ChangeLog.append(db, .cart, "g-other", at: Date()) }
        sync.pass()
        let source = SQLiteChangeLogSource(database: database)
        // This server's own entry (known): no sync asked for.
        _ = try await source.batch(after: seq - 1, knownSeqs: [seq], limit: 10)
        #expect(sync.reached == sync.required)
        // Another process's (not known): its answer and patches wait for a sync.
        let batch = try await source.batch(after: seq - 1, knownSeqs: [], limit: 10)
        #expect(batch.entries.map(\.seq) == [seq])
        #expect(sync.reached < sync.required)
    }
}
