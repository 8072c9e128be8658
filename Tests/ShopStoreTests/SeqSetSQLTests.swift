import GRDB
import Testing
@testable import ShopStore

/// The SQL functions through which SQLite fills and tests a ``SeqSet`` (`CSQLiteRowSets`), on a connection
/// set up as every ``ShopDatabase`` connection is.
@Suite struct SeqSetSQLTests {
    let queue: DatabaseQueue

    init() throws {
        queue = try DatabaseQueue(configuration: ShopDatabase.configuration)
    }

    @Test func collectingAddsEachRowidOnceAndIgnoresRowidsOutOfRange() throws {
        let set = try queue.read { db in
            var set = SeqSet(maximum: 130)
            set.insert(5)
            try set.collect(
                db, sql: "SELECT storefront_collect_rowids(?1, value) FROM json_each(?2)", text: "[0, 1, 64, 64, 130, 131, -1, 5, 127]")
            return set
        }
        #expect(set.count == 6)
        #expect(set.members == [0, 1, 5, 64, 127, 130])
    }

    @Test func aWalkKeepsTheMembersInTheStatementsOrder() throws {
        let (kept, withinBudget) = try queue.read { db in
            var set = SeqSet(maximum: 100)
            for seq: Int64 in [3, 50, 7, 99] { set.insert(seq) }
            var kept: [Int64] = []
            let withinBudget = try set.walk(
                db, sql: "SELECT value FROM json_each(?2) WHERE storefront_walk_keeps(?1, value)",
                arguments: [.text("[99, 1, 2, 3, 200, 50, 4, 7]")], budget: nil
            ) { seq in
                kept.append(seq)
                return true
            }
            return (kept, withinBudget)
        }
        #expect(withinBudget)
        #expect(kept == [99, 3, 50, 7])
    }

    @Test func aWalkPastItsBudgetGivesUpAndHandsNoMoreRows() throws {
        let results = try queue.read { db in
            var set = SeqSet(maximum: 100)
            for seq: Int64 in [1, 2, 3, 4, 5, 6] { set.insert(seq) }
            return try [0, 2, 6, 7].map { budget in
                var kept: [Int64] = []
                let withinBudget = try set.walk(
                    db, sql: "SELECT value FROM json_each(?2) WHERE storefront_walk_keeps(?1, value) LIMIT ?3",
                    arguments: [.text("[1, 2, 3, 4, 5, 6]"), .integer(100)], budget: budget
                ) { seq in
                    kept.append(seq)
                    return true
                }
                return (kept, withinBudget)
            }
        }
        #expect(results[0].0 == [] && !results[0].1)
        #expect(results[1].0 == [1, 2] && !results[1].1)
        #expect(results[2].0 == [1, 2, 3, 4, 5, 6] && results[2].1)
        #expect(results[3].0 == [1, 2, 3, 4, 5, 6] && results[3].1)
    }

    @Test func theFunctionsRefuseAnythingButABoundSet() throws {
        try queue.read { db in
            for sql in ["SELECT storefront_walk_keeps(NULL, 1)", "SELECT storefront_walk_keeps('set', 1)", "SELECT storefront_collect_rowids(7, 1)"] {
                #expect(throws: DatabaseError.self, "\(sql)") { try Row.fetchAll(db, sql: sql) }
            }
        }
    }

    @Test func schemaObjectsCannotCallTheFunctions() throws {
        try queue.write { db in
            try db.execute(sql: "CREATE VIEW kept AS SELECT storefront_walk_keeps(NULL, 1) AS k")
            let error = #expect(throws: DatabaseError.self) { try Row.fetchAll(db, sql: "SELECT * FROM kept") }
            #expect(error?.message?.contains("unsafe use of storefront_walk_keeps") == true)
        }
    }

    @Test func anArrayBySeqIsPracticalWhileSeqsAreDenseEnoughForItsWidth() {
        let million = 1_000_000
        // Small: whatever the catalog, and without reading its size.
        #expect(SeqSet.isPractical(maximum: SeqSet.smallMaximum, bitsPerSeq: 32, products: { Issue.record("read the size"); return 0 }))
        // A set: up to 128 seqs a product; positions (32 bits): up to 4.
        #expect(SeqSet.isPractical(maximum: 128 * Int64(million), bitsPerSeq: 1, products: { million }))
        #expect(!SeqSet.isPractical(maximum: 129 * Int64(million), bitsPerSeq: 1, products: { million }))
        #expect(SeqSet.isPractical(maximum: 4 * Int64(million), bitsPerSeq: 32, products: { million }))
        #expect(!SeqSet.isPractical(maximum: 5 * Int64(million), bitsPerSeq: 32, products: { million }))
        // A row written behind the store.
        #expect(!SeqSet.isPractical(maximum: .max, bitsPerSeq: 1, products: { million }))
    }
}
