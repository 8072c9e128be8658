import GRDB
import Foundation
import Testing
@testable import ShopStore

/// Values bound by ``DirectStatement`` reach SQLite as they are.
@Suite struct DirectStatementTests {
    @Test func textIsBoundByteForByteAndEmptyTextIsNotNull() throws {
        let db = try DatabaseQueue()
        let values = ["", "a", "p-0001", "smart linen ☃ é (NFC) e\u{301} (NFD)", String(repeating: "long text ", count: 40), "nul\u{0}inside"]
        try db.write { db in
            try db.execute(sql: "CREATE TABLE t (i INTEGER PRIMARY KEY, v TEXT)")
            for (i, value) in values.enumerated() {
                try DirectStatement(db, "INSERT INTO t (i, v) VALUES (?, ?)").execute([.integer(Int64(i)), .text(value)])
            }
        }
        try db.read { db in
            for (i, value) in values.enumerated() {
                let row = try #require(try Row.fetchOne(db, sql: "SELECT v IS NULL AS missing, CAST(v AS BLOB) AS bytes FROM t WHERE i = ?", arguments: [i]))
                #expect(row["missing"] == false, "\(value.debugDescription)")
                let bytes: Data = row["bytes"] ?? Data()
                #expect(Array(bytes) == Array(value.utf8), "\(value.debugDescription)")
            }
        }
    }

    @Test func aKeptStatementRunsOnlyOnTheConnectionItWasCompiledFor() throws {
        let first = try DatabaseQueue()
        let second = try DatabaseQueue()
        try first.write { try $0.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)") }
        try second.write { try $0.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (2)") }
        let sql = StatementSQL("SELECT x FROM t")
        for _ in 0..<3 {
            #expect(try first.read { try DirectStatement($0, sql).one([]) { $0.int(0) } } == 1)
            #expect(try first.read { try DirectStatement($0, sql).one([]) { $0.int(0) } } == 1)
            #expect(try second.read { try DirectStatement($0, sql).one([]) { $0.int(0) } } == 2)
        }
    }

    @Test func aKeptStatementNeitherKeepsItsConnectionOpenNorOutlivesGRDBsCache() throws {
        let sql = StatementSQL("SELECT x FROM t")
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)")
            #expect(try DirectStatement(db, sql).one([]) { $0.int(0) } == 1)
            // GRDB finalizes its cached statements here; the one kept goes with them, and is compiled again.
            db.releaseMemory()
            try db.execute(sql: "UPDATE t SET x = 3")
            #expect(try DirectStatement(db, sql).one([]) { $0.int(0) } == 3)
        }
        // SQLite refuses to close a connection with a statement not finalized (SQLITE_BUSY): the kept one is not
        // held here.
        try queue.close()
        let reopened = try DatabaseQueue()
        try reopened.write { try $0.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (4)") }
        #expect(try reopened.read { try DirectStatement($0, sql).one([]) { $0.int(0) } } == 4)
    }
}
