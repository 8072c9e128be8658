import Foundation
import GRDB
import Shop
import Testing
@testable import ShopStore

/// The poll's own connection: it reads what every other connection committed, as GRDB's readers do.
@Suite struct ChangeLogProbeTests {
    @Test func readsTheLastEntryThisAndOtherConnectionsCommitted() async throws {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.databasePath)
        let probe = ChangeLogProbe(path: folder.databasePath)
        let before = try probe.lastSeq()
        #expect(before == (try storedLastSeq(database)))

        // Another set of services on the file stands for another server.
        let other = ShopServices.testing(try ShopDatabase(path: folder.databasePath))
        _ = try await other.cart.add(productId: "p-0001", quantity: 1, for: .testShopper)
        let afterOther = try probe.lastSeq()
        #expect(afterOther > before)
        #expect(afterOther == (try storedLastSeq(database)))

        let own = ShopServices.testing(database)
        try await own.favorites.setFavorite(productId: "p-0002", isFavorite: true, for: .testShopper)
        #expect(try probe.lastSeq() == afterOther + 1)
    }

    @Test func aFileThatCannotBeOpenedThrowsAndIsTriedAgainAtTheNextRead() throws {
        let folder = try TemporaryFolder()
        let path = folder.url.appendingPathComponent("not-yet/catalog.sqlite").path
        let probe = ChangeLogProbe(path: path)
        #expect(throws: DatabaseError.self) { try probe.lastSeq() }

        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let database = try ShopDatabase(path: path)
        #expect(try probe.lastSeq() == (try storedLastSeq(database)))
    }

    @Test func aReadThatFailsThrowsAndTheProbeOpensTheFileAgain() async throws {
        let folder = try TemporaryFolder()
        let database = try ShopDatabase(path: folder.databasePath)
        let probe = ChangeLogProbe(path: folder.databasePath)
        _ = try probe.lastSeq()
        // The file emptied under the open connections, then a commit: the probe's next read finds no database.
        try await database.writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        #expect(truncate(folder.databasePath, 0) == 0)
        _ = try? await ShopServices.testing(database).cart.add(productId: "p-0001", quantity: 1, for: .testShopper)
        #expect(throws: DatabaseError.self) { try probe.lastSeq() }
        #expect(throws: DatabaseError.self) { try probe.lastSeq() }  // opened again: the file is still no database
    }

    @Test func theLogOfAFileAndOfMemoryReadTheSameLastEntryAsGRDB() async throws {
        let folder = try TemporaryFolder()
        for database in [try ShopDatabase(path: folder.databasePath), try ShopDatabase(path: ":memory:")] {
            let services = ShopServices.testing(database)
            _ = try await services.cart.add(productId: "p-0001", quantity: 1, for: .testShopper)
            let source = SQLiteChangeLogSource(database: database)
            #expect(try await source.lastSeq() == (try storedLastSeq(database)))
            #expect(try await source.lastSeq() > 0)
        }
    }
}

/// The last entry as GRDB reads it (synchronous, so that GRDB's synchronous `read` is the one called).
private func storedLastSeq(_ database: ShopDatabase) throws -> Int64 {
    try database.writer.read { try ChangeLog.lastSeq($0) }
}
