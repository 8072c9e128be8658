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
}
