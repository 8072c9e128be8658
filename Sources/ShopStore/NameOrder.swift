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
/// marks them wanted; the catalog service then reads them on a reader connection after it answered
/// (``readIfWanted(from:)``). Costs 4 bytes per product seq (4 MB at a million products) and one walk of the
/// name index per text change that a search then meets (~0.1 s at a million products). Not kept: a product's
/// id changed behind the store (the shop never changes one; the version does not count it).
final class NameOrder: Sendable {
    /// Every product's position in name order, read at one text version.
    struct Positions: Sendable {
        /// The text version they were read at.
        let version: Int64
        /// `ranks[seq]`: the product's position in name order plus one; 0 for a seq no product has.
        fileprivate let ranks: [Int32]
    }

    private struct State {
        var positions: Positions?
        var isWanted = false
        /// The read running, if any.
        var reading: Task<Void, Never>?
    }

    private let state = Locked(State())

    /// The positions, if they were read at `version`; otherwise marks them wanted and returns nil.
    func positions(at version: Int64) -> Positions? {
        state.withLock { state in
            if let positions = state.positions, positions.version == version { return positions }
            state.isWanted = true
            return nil
        }
    }

    /// Reads the positions in `db`, inside its read transaction, and keeps them.
    /// - Throws: A `DatabaseError`.
    func read(_ db: Database) throws {
        let version = try SearchPrefixCounts.versions(db).version
        let maximumSeq = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM product") ?? 0
        var ranks = [Int32](repeating: 0, count: Int(maximumSeq) + 1)
        var position: Int32 = 0
        try DirectStatement(db, "SELECT p.seq FROM product p ORDER BY p.name COLLATE NOCASE, p.id").forEachRow([]) { row in
            position += 1
            ranks[Int(row.int64(0))] = position
            return true
        }
        let positions = Positions(version: version, ranks: ranks)
        state.withLock { state in
            // A read that started earlier may end later: keep the newer version.
            if state.positions.map({ $0.version <= version }) ?? true { state.positions = positions }
            state.isWanted = false
        }
    }

    /// Starts reading the positions on one of `writer`'s reader connections, if a search wanted them and no
    /// read is running. Returns at once.
    func readIfWanted(from writer: any DatabaseWriter) {
        state.withLock { state in
            guard state.isWanted, state.reading == nil else { return }
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
    /// The first `count` of `matches` in name order, or nil when one of them has no position (they were read
    /// for another catalog: not possible at the version they were read at).
    func first(_ count: Int, of matches: SeqSet) -> [Int64]? {
        guard count > 0 else { return [] }
        // Sorted by rank; at most `count` long. Matches come in seq order, which is not name order, so few
        // of them enter once it is full.
        var first: [(rank: Int32, seq: Int64)] = []
        first.reserveCapacity(count + 1)
        var missing = false
        matches.forEach { seq in
            let rank = seq < ranks.count ? ranks[Int(seq)] : 0
            guard rank > 0 else {
                missing = true
                return false
            }
            if first.count == count {
                guard rank < first[count - 1].rank else { return true }
                first.removeLast()
            }
            var low = 0
            var high = first.count
            while low < high {
                let middle = (low + high) / 2
                if first[middle].rank < rank { low = middle + 1 } else { high = middle }
            }
            first.insert((rank, seq), at: low)
            return true
        }
        return missing ? nil : first.map(\.seq)
    }
}
