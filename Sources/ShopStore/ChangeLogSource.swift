import Shop

/// Where a ``ChangeFeed`` reads its log: one database engine's change-log table, read in one snapshot per
/// batch. The SQLite store and the PostgreSQL store each provide one; the feed's ordering, deduplication and
/// publication are the same for both.
package protocol ChangeLogSource: Sendable {
    /// The number of the last entry ever written (0 before the first; pruning does not lower it).
    func lastSeq() async throws -> Int64

    /// Up to `limit` entries after `seq`, with the events of those not in `knownSeqs` (this server's own,
    /// published from what it wrote instead of read back) whose data is shown here (`shown`, nil: all), read
    /// in one snapshot.
    func batch(after seq: Int64, knownSeqs: Set<Int64>, shown: ShownShoppers?, limit: Int) async throws -> ChangeBatch
}

/// Entries read in one snapshot, with the events each one publishes.
package struct ChangeBatch: Sendable {
    /// The entries after the position, oldest first, with their events (empty for entries whose events
    /// are known, or that a later entry of the batch supersedes).
    package var entries: [(seq: Int64, events: [ShopEvent])]
    /// The oldest entry kept, nil when the log is empty.
    package var firstKept: Int64?
    /// The last entry ever written.
    package var lastWritten: Int64

    /// A batch of read entries.
    package init(entries: [(seq: Int64, events: [ShopEvent])], firstKept: Int64?, lastWritten: Int64) {
        self.entries = entries
        self.firstKept = firstKept
        self.lastWritten = lastWritten
    }
}

extension ChangeLog {
    /// What reading a batch's entries takes: which entries need their data read, and which are skipped.
    package enum Reading: Equatable, Sendable {
        /// This server wrote the entry: its events are known.
        case known
        /// A later entry of the batch shows the same data (a cart or product changed again): nothing to read.
        case superseded
        /// The data is one shopper's, whom no session of this process shows (see `ShownShoppers`): nothing to
        /// read, nothing to publish.
        case notShown
        /// Read the entry's data.
        case read(Meaning)
    }

    /// How to read each of `entries` (given in log order): each shopper's cart and each changed product
    /// are read once, for their last entry of the batch (a market simulation changes the same products
    /// many times a second); entries in `knownSeqs` are not read at all, nor those of a shopper `shown` does
    /// not hold (nil: every shopper's are read).
    package static func readings(of entries: [Entry], knownSeqs: Set<Int64>, shown: ShownShoppers? = nil) -> [Reading] {
        var lastCartEntry: [String: Int64] = [:]
        var lastProductEntry: [String: Int64] = [:]
        for entry in entries where !knownSeqs.contains(entry.seq) {
            if entry.kind == .cart { lastCartEntry[entry.subject] = entry.seq }
            if entry.kind == .productChanged { lastProductEntry[entry.subject] = entry.seq }
        }
        return entries.map { entry in
            if knownSeqs.contains(entry.seq) { return .known }
            if entry.kind == .cart && lastCartEntry[entry.subject] != entry.seq { return .superseded }
            if entry.kind == .productChanged && lastProductEntry[entry.subject] != entry.seq { return .superseded }
            let meaning = entry.meaning
            if let shown, let owner = meaning.shownOnlyTo, !shown.contains(owner) { return .notShown }
            return .read(meaning)
        }
    }
}
