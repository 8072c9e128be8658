import Foundation
import GRDB
import Shop
import Synchronization
import Testing
@testable import ShopStore

/// ``WriteAheadLogSync``: the writer commits without syncing, every commit (whatever wrote it) takes a
/// generation, and `pass` syncs the log once for all of them.
@Suite struct WriteAheadLogSyncTests {
    /// The descriptors a stand-in syncer was asked to sync.
    final class Syncs: Sendable {
        let descriptors = Mutex<[Int32]>([])
        func withLock<T>(_ body: (inout [Int32]) -> T) -> T { descriptors.withLock { body(&$0) } }
    }

    /// A pool on a new file whose writer commits through `sync`, which counts the syncs it is asked for.
    static func pool(in folder: TemporaryFolder, syncs: Syncs) throws -> (DatabasePool, WriteAheadLogSync) {
        let pool = try DatabasePool(path: folder.databasePath)
        let sync = WriteAheadLogSync(databasePath: folder.databasePath, syncer: { descriptor in
            syncs.withLock { $0.append(descriptor) }
            return 0
        })
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE t (x INTEGER)")
            try sync.install(on: db)
        }
        return (pool, sync)
    }

    @Test func eachCommitTakesAGenerationThatOnePassSyncs() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(in: folder, syncs: syncs)
        #expect(sync.required == 0)
        try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
        try pool.writeWithoutTransaction { try $0.execute(sql: "INSERT INTO t VALUES (2)") }  // autocommit too
        #expect(sync.required == 2)
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
        let (pool, sync) = try Self.pool(in: folder, syncs: syncs)
        #expect(try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 1)  // NORMAL
        try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
        sync.pass()
        let descriptor = try #require(syncs.withLock { $0.first })
        var synced = stat()
        var log = stat()
        #expect(fstat(descriptor, &synced) == 0)
        #expect(stat(folder.databasePath + "-wal", &log) == 0)
        #expect(synced.st_ino == log.st_ino)
    }

    @Test func aRequestedSyncIsOneMoreGeneration() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(in: folder, syncs: syncs)
        sync.requestSync()
        #expect(sync.required == 1)
        sync.pass()
        #expect(sync.reached == 1)
        #expect(syncs.withLock { $0.count } == 1)
        try pool.close()
    }

    @Test func withoutALogThereIsNothingToSync() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(in: folder, syncs: syncs)
        try pool.close()  // the last connection: the log is checkpointed and deleted
        #expect(!FileManager.default.fileExists(atPath: folder.databasePath + "-wal"))
        sync.requestSync()
        sync.pass()
        #expect(sync.reached == 1)
        #expect(syncs.withLock { $0.isEmpty })
    }

    @Test func theLogIsStillCheckpointedAutomatically() throws {
        let folder = try TemporaryFolder()
        let syncs = Syncs()
        let (pool, sync) = try Self.pool(in: folder, syncs: syncs)
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_autocheckpoint = 10") }
        // The hook read the limit when it was installed (1 000 pages): install again to take the new one.
        try pool.writeWithoutTransaction { try sync.install(on: $0) }
        for value in 0..<40 { try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (?)", arguments: [value]) } }
        // Checkpointed: the log restarts from its start rather than growing by a page per commit.
        let pages = try pool.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")! }
        let logPages: Int = pages[1]
        #expect(logPages < 20)
        #expect(sync.required == 40 + 0)  // `PRAGMA wal_checkpoint` commits nothing
    }

    @Test func aServersDatabaseOpenedToDeferTheSyncCountsItsCartWrites() async throws {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.databasePath, logSyncing: .deferred)
        let sync = try #require(database.logSync)
        let services = ShopServices.testing(database)
        let before = sync.required
        let shopper = Shopper.guest("g-sync")
        _ = try await services.cart.add(productId: "p-0001", quantity: 1, for: shopper)
        #expect(sync.required == before + 1)
        #expect(sync.reached < sync.required)
        sync.pass()
        #expect(sync.reached == sync.required)
        // By default each commit syncs the log itself, and nothing is deferred.
        let other = try TemporaryFolder()
        #expect(try ShopDatabase(path: other.databasePath).logSync == nil)
    }
}
