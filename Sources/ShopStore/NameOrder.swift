import GRDB
import Shop

/// The catalog's name order (`name COLLATE NOCASE, id`, the default sort) as each product's position, kept in
/// memory with the text version it was read at: `search_text_version.version`, which the index's triggers bump
/// in the transaction of every product inserted or deleted and every change of a name or description, made by
/// any process (see ``SearchPrefixCounts``). Positions read at the version a read transaction sees are exact
/// in it.
///
/// Why: a search sorted by name shows its first matches in name order. Without positions the page is found by
/// walking the name index until the page is full (cheap when the matches are spread along it) or by looking up
/// and sorting every match (~1 µs and a page of the table each). Matches bunched late in the order cost both:
/// at a million products every match of `"smart linen"` is named "Smart Linen …", 81 % of the way along; the
/// walk gives up after ten steps per match, then 6 182 matches are sorted. With the positions the page is the
/// matches with the smallest positions: one array read per match.
///
/// Stale positions are never used: a search that finds them stale (or not read yet) takes the other plans and
/// marks them wanted, and so does the whole catalog shown sorted by name without a search (the catalog screen
/// as it appears, before the user types); the catalog service then reads them on a reader connection after it
/// answered (``readIfWanted(from:)``). Costs 4 bytes per product seq (4 MB at a million products) and one walk of the
/// name index per text change that such a page then meets (~0.1 s at a million products). A product's id or
/// seq is never changed by the shop; a change made behind it bumps the text version too (migration
/// `v11-product-key-changes`).
final class NameOrder: Sendable {
    /// Every product's position in name order, read at one version of the catalog.
    struct Positions: Sendable {
        /// The version of the catalog they were read at.
        let version: Version
        /// `ranks[seq]`: the product's position in name order plus one; 0 for a seq no product has.
        let ranks: [Int32]
    }

    /// What the positions are exact for: the text version, and the schema's (`PRAGMA schema_version`, which
    /// changes when the index's triggers are dropped and made again, as a seed does: a seed by a server older
    /// than the text version's bump in it still makes the positions stale).
    struct Version: Equatable, Sendable {
        var text: Int64
        var schema: Int64

        /// Whether positions read at this version are at least as new as ones read at `other`: both versions
        /// only grow, in every process's transactions.
        func covers(_ other: Version) -> Bool {
            text >= other.text && schema >= other.schema
        }

        /// The version `db`'s transaction sees.
        static func current(_ db: Database) throws -> Version {
            Version(
                text: try SearchPrefixCounts.versions(db).version,
                schema: try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA schema_version")) ?? 0)
        }
    }

    /// Migration `v11-product-key-changes`: a change of a product's id or seq (which the shop never makes)
    /// counts as a text change, so that positions read before it are not used after (a seq names the
    /// product in the positions; an id orders products of the same name). The seq's other names are listed:
    /// SQLite fires an `UPDATE OF` trigger only for the names the `SET` uses.
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TRIGGER product_key_update AFTER UPDATE OF id, seq, rowid, _rowid_, oid ON product
            WHEN old.id IS NOT new.id OR old.seq IS NOT new.seq BEGIN
                UPDATE search_text_version SET version = version + 1;
            END
            """)
    }

    private struct State {
        var positions: Positions?
        /// The newest version a page wanted positions for, until a read at least as new.
        var wanted: Version?
        /// The read running, if any.
        var reading: Task<Void, Never>?
    }

    private let state = Locked(State())

    /// The positions, if they were read at `version`; otherwise nil, and marks them wanted unless those kept,
    /// or a want already marked, are at least as new (a page whose transaction began before the last read).
    func positions(at version: Version) -> Positions? {
        state.withLock { state in
            if let positions = state.positions {
                if positions.version == version { return positions }
                if positions.version.covers(version) { return nil }
            }
            if let wanted = state.wanted, wanted.covers(version) { return nil }
            state.wanted = version
            return nil
        }
    }

    /// Whether the positions kept were read at `version` (nothing is marked).
    func isCurrent(at version: Version) -> Bool {
        state.withLock { $0.positions?.version == version }
    }

    /// Reads the positions in `db`, inside its read transaction, and keeps them unless those kept are newer;
    /// a want they are at least as new as is met. When seqs are too sparse for an array indexed by them
    /// (``SeqSet/isPractical(maximum:bitsPerSeq:in:)``: rows written behind the store, seqs below 0, or a catalog most
    /// of whose products were deleted) they are kept empty at this version: every search then takes another plan, and
    /// none reads them again until the catalog's text changes.
    /// - Throws: A `DatabaseError`.
    func read(_ db: Database) throws {
        let version = try Version.current(db)
        let maximumSeq = max(try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM product") ?? 0, 0)
        var ranks: [Int32] = []
        if try SeqSet.isPractical(maximum: maximumSeq, bitsPerSeq: 32, in: db) {
            ranks = [Int32](repeating: 0, count: Int(maximumSeq) + 1)
            var position: Int32 = 0
            try DirectStatement(db, "SELECT p.seq FROM product p ORDER BY p.name COLLATE NOCASE, p.id").forEachRow([]) { row in
                position += 1
                let seq = row.int64(0)
                if seq >= 0 && seq <= maximumSeq { ranks[Int(seq)] = position }
                return true
            }
        }
        let positions = Positions(version: version, ranks: ranks)
        state.withLock { state in
            if let kept = state.positions, kept.version != version, kept.version.covers(version) { return }
            state.positions = positions
            if let wanted = state.wanted, version.covers(wanted) { state.wanted = nil }
        }
    }

    /// Starts reading the positions on one of `writer`'s reader connections, if a search wanted them and no
    /// read is running. Returns at once.
    func readIfWanted(from writer: any DatabaseWriter) {
        state.withLock { state in
            guard state.wanted != nil, state.reading == nil else { return }
            state.reading = Task.detached(priority: .utility) { [self] in
                // A failed read leaves them wanted: the next search asks again.
                try? await writer.read { db in try self.read(db) }
                self.state.withLock { $0.reading = nil }
            }
        }
    }

    /// The read that ``readIfWanted(from:)`` started, while it runs.
    var runningRead: Task<Void, Never>? { state.withLock { $0.reading } }
}

extension NameOrder.Positions {
    /// The most products a page by positions reaches (offset plus limit): a page further on is found by
    /// the other plans (keeping the first `count` costs up to `count` moves per match).
    static let deepest = 1_000

    /// The first `count` of `matches` in name order (`count` at most ``deepest``), or nil when one of them has
    /// no position (they were read for another catalog: not possible at the version they were read at).
    ///
    /// The kept ones are a max-heap by rank, so a match costs at most log2(`count`) moves whatever the order
    /// seqs and names have: a catalog created in reverse name order (every match smaller than all kept) costs
    /// what a shuffled one does, not `count` moves per match.
    func first(_ count: Int, of matches: SeqSet) -> [Int64]? {
        precondition(count <= Self.deepest, "a page beyond NameOrder.Positions.deepest")
        guard count > 0 else { return [] }
        var heap = RankHeap(capacity: count)
        var missing = false
        matches.forEach { seq in
            let rank = seq >= 0 && seq < ranks.count ? ranks[Int(seq)] : 0
            guard rank > 0 else {
                missing = true
                return false
            }
            heap.offer(rank: rank, seq: seq)
            return true
        }
        return missing ? nil : heap.inOrder()
    }
}

/// At most `capacity` (rank, seq) pairs with the smallest ranks offered: a max-heap, whose root is the
/// largest rank kept, the one a smaller offer replaces. Ranks are distinct (one position per product).
private struct RankHeap {
    private var elements: [(rank: Int32, seq: Int64)] = []
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        elements.reserveCapacity(capacity)
    }

    /// Keeps the pair if fewer than `capacity` are kept or `rank` is smaller than the largest kept.
    mutating func offer(rank: Int32, seq: Int64) {
        if elements.count < capacity {
            elements.append((rank, seq))
            var child = elements.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard elements[parent].rank < elements[child].rank else { break }
                elements.swapAt(parent, child)
                child = parent
            }
        } else if rank < elements[0].rank {
            elements[0] = (rank, seq)
            var parent = 0
            while true {
                let left = 2 * parent + 1
                guard left < elements.count else { break }
                let right = left + 1
                let larger = right < elements.count && elements[right].rank > elements[left].rank ? right : left
                guard elements[larger].rank > elements[parent].rank else { break }
                elements.swapAt(parent, larger)
                parent = larger
            }
        }
    }

    /// The seqs kept, smallest rank first.
    func inOrder() -> [Int64] {
        elements.sorted { $0.rank < $1.rank }.map(\.seq)
    }
}
