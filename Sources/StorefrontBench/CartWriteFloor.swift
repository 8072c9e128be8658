import GRDB
import ShopStore

#if canImport(Glibc)
import Glibc
#endif

/// The storage work of one `cart/add`, straight through GRDB with the server's settings (WAL, `synchronous =
/// FULL`, foreign keys, `BEGIN IMMEDIATE` with the change in a savepoint) and none of the server around it:
/// the floor a durable write costs, with and without the change log, so that what the log adds per write
/// can be told apart from the sync every write pays anyway.
///
/// The statements are those `LiveCartService.add` and `change` (ShopStore) ran until issue 16's round 6, kept
/// as they were so that the propagation figures stay comparable across rounds (the service now reads the
/// product's limits and the line in one statement and derives the cart instead of reading it back): read the
/// product and the line, upsert the line, bump the cart revision, read the priced cart back; with the log,
/// append its entry (pruning every 500th, as `ChangeLog.append` does); with the read-back, also what
/// `ChangeFeed` reads after its own commit (`Batch`: the first and last numbers and the entries after its
/// position) in a read transaction of its own.
final class CartWriteFloor {
    /// What one write includes.
    enum Variant: String, CaseIterable {
        /// The cart change only (the server before the change log).
        case withoutLog
        /// The cart change and its change-log entry, in one transaction.
        case withLog
        /// As `withLog`, then the feed's read of the log after the commit.
        case withLogAndReadBack
    }

    /// Whose cart the floor writes (a guest of its own, as a server's session starts): every statement
    /// names it, as the server's do since carts are per shopper.
    static let owner = "g:bench-floor"

    private let pool: DatabasePool
    private var lastSeq: Int64 = 0

    /// Opens `path` (a database the server created and seeded) the way the server opens it.
    /// - Parameter syncs: whether a commit syncs the log (`synchronous = FULL`, as the server does) or not
    ///   (`OFF`: what is left is the statements' own cost).
    init(path: String, syncs: Bool = true) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.foreignKeysEnabled = true
        pool = try DatabasePool(path: path, configuration: configuration)
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = \(syncs ? "FULL" : "OFF")") }
        lastSeq = try pool.read { try ChangeLog.lastSeq($0) }
    }

    /// Adds one unit of `productId` to the cart as `variant` says; returns how long it took (commit synced).
    func add(_ productId: String, _ variant: Variant) throws -> UInt64 {
        let start = monotonicNanoseconds()
        let now = Int64(time(nil)) * 1000
        let seq = try pool.writeWithoutTransaction { db -> Int64 in
            var seq: Int64 = 0
            try db.inTransaction(.immediate) {
                try db.inSavepoint {
                    guard try Row.fetchOne(
                        db.cachedStatement(sql: """
                            SELECT p.id, p.name, p.description, p.price, p.categoryId, p.stock, p.maxPerOrder, p.createdAt, p.isFeatured
                            FROM product p WHERE p.id = ?
                            """),
                        arguments: [productId]) != nil
                    else { throw BenchError(description: "no product \(productId)") }
                    _ = try Int.fetchOne(
                        db.cachedStatement(sql: "SELECT quantity FROM cart_line WHERE owner = ? AND productId = ?"), arguments: [Self.owner, productId])
                    try db.cachedStatement(sql: """
                        INSERT INTO cart_line (owner, productId, quantity) VALUES (?, ?, ?)
                        ON CONFLICT (owner, productId) DO UPDATE SET quantity = quantity + excluded.quantity
                        """).execute(arguments: [Self.owner, productId, 1])
                    try db.cachedStatement(sql: """
                        INSERT INTO cart_revision (owner, revision) VALUES (?, 1)
                        ON CONFLICT (owner) DO UPDATE SET revision = revision + 1
                        """).execute(arguments: [Self.owner])
                    _ = try Row.fetchAll(db.cachedStatement(sql: """
                        SELECT c.productId, p.name, p.categoryId, p.price, c.quantity, k.taxRate
                        FROM cart_line c
                        JOIN product p ON p.id = c.productId
                        JOIN category k ON k.id = p.categoryId
                        WHERE c.owner = ?
                        ORDER BY c.seq
                        """), arguments: [Self.owner])
                    _ = try Int64.fetchOne(db.cachedStatement(sql: "SELECT revision FROM cart_revision WHERE owner = ?"), arguments: [Self.owner])
                    if variant != .withoutLog {
                        try db.cachedStatement(sql: "INSERT INTO change_log (at, kind, subject) VALUES (?, ?, ?)")
                            .execute(arguments: [now, "cart", Self.owner])
                        seq = db.lastInsertedRowID
                        if seq % ChangeLog.pruneEvery == 0 { try ChangeLog.prune(db, lastSeq: seq, now: now) }
                    }
                    return .commit
                }
                return .commit
            }
            return seq
        }
        if variant == .withLogAndReadBack {
            let after = lastSeq
            try pool.read { db in
                _ = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(seq) FROM change_log"))
                _ = try ChangeLog.lastSeq(db)
                _ = try Row.fetchAll(
                    db.cachedStatement(sql: "SELECT seq, kind, subject FROM change_log WHERE seq > ? ORDER BY seq LIMIT ?"),
                    arguments: [after, 512])
            }
        }
        if seq > 0 { lastSeq = seq }
        return monotonicNanoseconds() - start
    }

    /// The raw durable transaction the issue-16 goal is measured against: `BEGIN IMMEDIATE`, the line's
    /// upsert, `COMMIT` (synced), with the server's pragmas and nothing else (no product check, no revision,
    /// no read-back, no change log). Returns how long it took.
    func rawUpsert(_ productId: String) throws -> UInt64 {
        let start = monotonicNanoseconds()
        try pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                try db.cachedStatement(sql: """
                    INSERT INTO cart_line (owner, productId, quantity) VALUES (?, ?, ?)
                    ON CONFLICT (owner, productId) DO UPDATE SET quantity = quantity + excluded.quantity
                    """).execute(arguments: [Self.owner, productId, 1])
                return .commit
            }
        }
        return monotonicNanoseconds() - start
    }

    /// Empties the cart (not measured), so that no line grows past what a product allows.
    func clear() throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM cart_line WHERE owner = ?", arguments: [Self.owner])
            try db.execute(sql: "UPDATE cart_revision SET revision = revision + 1 WHERE owner = ?", arguments: [Self.owner])
        }
    }
}
