import CSQLiteRowSets
import GRDB
import GRDBSQLite

/// A set of product seqs (rowids from 1 up to a known maximum) as bits: a search collects up to one per
/// product, and testing a bit is far cheaper than hashing into a `Set`.
///
/// SQLite fills and tests it itself, through the functions of `CSQLiteRowSets` (registered on every
/// connection by ``register(on:)``): ``collect(_:sql:text:)`` runs an aggregate over a search's matches,
/// ``walk(_:sql:arguments:budget:_:)`` a walk whose `WHERE` keeps the members. A row handed back to Swift
/// costs a `sqlite3_step` round trip, more than the row itself when a search has 100 000 matches.
struct SeqSet {
    private var words: [UInt64]
    private let maximum: Int64
    /// How many seqs are in the set.
    private(set) var count = 0

    /// An empty set for seqs up to `maximum`.
    init(maximum: Int64) {
        self.maximum = max(maximum, 0)
        words = Array(repeating: 0, count: Int(self.maximum) / 64 + 1)
    }

    /// Whether an array indexed by seqs 0...`maximum`, `bitsPerSeq` bits each (a set: 1; NameOrder's positions:
    /// 32), is worth its memory for a catalog of `products`: always up to ``smallMaximum`` seqs, else while it
    /// takes at most 128 bits per product (a set up to 128 seqs a product, positions up to 4). The shop numbers
    /// products in the order it creates them, so seqs run past the catalog's size only when most of its products
    /// were deleted, or when a row was written behind the store (`UPDATE product SET seq = 1e12`, which would ask
    /// for gigabytes). Beyond that, searches go without the array (SQL alone, or another plan).
    /// - Parameter products: the catalog's size, read only when `maximum` is past ``smallMaximum``.
    static func isPractical(maximum: Int64, bitsPerSeq: Int64, products: () throws -> Int) rethrows -> Bool {
        try maximum <= smallMaximum || maximum / 128 <= Int64(products()) / bitsPerSeq
    }

    /// ``isPractical(maximum:bitsPerSeq:products:)`` for the catalog in `db` (its size from the categories' kept
    /// counts), and false when a seq is below 0 (a row written behind the store: an array indexed by seqs holds
    /// none, so a set of matches would miss it).
    /// - Throws: A `DatabaseError`.
    static func isPractical(maximum: Int64, bitsPerSeq: Int64, in db: Database) throws -> Bool {
        // The smallest seq is read from the tree's edge, as the largest is.
        try isPractical(maximum: maximum, bitsPerSeq: bitsPerSeq, products: { try CategoryCounts.products(db, in: nil) })
            && (try Int64.fetchOne(db, sql: "SELECT MIN(seq) FROM product") ?? 0) >= 0
    }

    /// The most seqs ``isPractical(maximum:bitsPerSeq:products:)`` allows whatever the catalog's size (128 KiB
    /// of bits, 4 MiB of positions).
    static let smallMaximum: Int64 = 1 << 20

    /// Adds `seq`; seqs outside 0...maximum are ignored (none exist).
    mutating func insert(_ seq: Int64) {
        guard seq >= 0, seq <= maximum else { return }
        let mask: UInt64 = 1 << UInt64(seq % 64)
        if words[Int(seq) / 64] & mask == 0 {
            words[Int(seq) / 64] |= mask
            count += 1
        }
    }

    /// The seqs in the set, in increasing order.
    var members: [Int64] {
        var members: [Int64] = []
        members.reserveCapacity(count)
        forEach { seq in
            members.append(seq)
            return true
        }
        return members
    }

    /// Calls `body` with each seq of the set, in increasing order, while it returns true.
    func forEach(_ body: (Int64) -> Bool) {
        for (index, word) in words.enumerated() where word != 0 {
            var bits = word
            while bits != 0 {
                guard body(Int64(index * 64 + bits.trailingZeroBitCount)) else { return }
                bits &= bits - 1
            }
        }
    }

    /// Whether `seq` is in the set.
    func contains(_ seq: Int64) -> Bool {
        guard seq >= 0, seq <= maximum else { return false }
        return words[Int(seq) / 64] & (1 << UInt64(seq % 64)) != 0
    }

    // MARK: Filled and tested by SQLite

    /// Registers the functions on `db` (every connection of a ``ShopDatabase``).
    static func register(on db: Database) throws {
        let code = srs_register(db.sqliteConnection)
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "registering storefront_collect_rowids")
        }
    }

    /// Adds every rowid that `sql` hands to `storefront_collect_rowids(?1, rowid)`, an aggregate: its
    /// parameter 1 is this set, parameter 2 `text`.
    mutating func collect(_ db: Database, sql: String, text: String) throws {
        let statement = try DirectStatement(db, sql)
        let maximum = maximum
        let added = try words.withUnsafeMutableBufferPointer { words in
            var set = srs_row_set(words: words.baseAddress, maximum: maximum, count: 0, steps: 0, budget: -1, gave_up: 0)
            try withUnsafeMutablePointer(to: &set) { set in try statement.execute([.rowSet(set), .text(text)]) }
            return Int(set.count)
        }
        count += added
    }

    /// Steps `sql`, whose `WHERE` asks `storefront_walk_keeps(?1, seq)` (this set) and whose first column
    /// is an integer, calling `body` with each value until it returns false; parameters 2… are `arguments`.
    /// - Parameter budget: the most rows the walk asks about (nil: no limit); past it every row is kept, so a
    ///   `LIMIT` ends the statement, and the walk returns false (it gave up).
    /// - Returns: Whether the walk stayed within its budget.
    func walk(
        _ db: Database, sql: String, arguments: [DirectStatement.Argument], budget: Int?, _ body: (Int64) throws -> Bool
    ) throws -> Bool {
        let statement = try DirectStatement(db, sql)
        return try words.withUnsafeBufferPointer { words in
            // The C side only reads the words.
            var set = srs_row_set(
                words: UnsafeMutablePointer(mutating: words.baseAddress), maximum: maximum, count: 0, steps: 0,
                budget: Int64(budget ?? -1), gave_up: 0)
            return try withUnsafeMutablePointer(to: &set) { set in
                try statement.forEachRow([.rowSet(set)] + arguments) { row in
                    set.pointee.gave_up == 0 ? try body(row.int64(0)) : false
                }
                return set.pointee.gave_up == 0
            }
        }
    }
}
