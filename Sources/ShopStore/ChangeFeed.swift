import Foundation
import GRDB
import Logging
import Shop

/// Follows the change log of one database and publishes every entry on ``ShopEvents``, once, in log order:
/// this server's commits as soon as they are made (the service that made one awaits its publication, so
/// its caller's open ViewModels show it before the call returns), other processes' as the poll finds them.
///
/// A server starts at the end of the log (what is stored is loaded by the ViewModels anyway). When the
/// entries after its position were pruned before it read them, it publishes ``ShopEvent/resync``.
///
/// Why a poll of the last sequence number: it costs one indexed read per interval, works on every
/// platform and for every process on the file, and sees only committed data. `PRAGMA data_version` needs
/// a connection of its own kept for the purpose, and a watch on the WAL file fires on this server's own
/// writes and on checkpoints, and is Linux-specific; both would still need the same read of the log.
@MainActor
final class ChangeFeed {
    /// How long after a commit elsewhere the poll notices it, at most.
    nonisolated static let defaultPollInterval = ChangeFeedDefaults.pollInterval
    /// Entries read per round.
    nonisolated static let batchSize = 512

    private let database: ShopDatabase
    private let events: ShopEvents
    private let logger: Logger
    /// The last entry published.
    private(set) var position: Int64
    /// Events of this server's own entries, published in place of reading them back.
    private var known: [Int64: [ShopEvent]] = [:]
    private var isCatchingUp = false
    private var moreRequested = false
    private var waiters: [(target: Int64, continuation: CheckedContinuation<Void, Never>)] = []

    /// A feed positioned at the end of the log.
    nonisolated init(database: ShopDatabase, events: ShopEvents, logger: Logger = Logger(label: "storefront.feed")) {
        self.database = database
        self.events = events
        self.logger = logger
        position = (try? database.writer.read { try ChangeLog.lastSeq($0) }) ?? 0
    }

    /// Publishes the entries up to `seq` (this server's commit), with `events` for that entry instead of
    /// reading it back (and `earlier` for other entries of the same transaction); returns once they are
    /// published.
    func committed(_ seq: Int64, _ events: [ShopEvent], earlier: [Int64: [ShopEvent]] = [:]) async {
        // The common case, one process writing: its entries are the next ones, published without reading
        // the log back.
        let first = seq - Int64(earlier.count)
        if !isCatchingUp, first == position + 1, earlier.keys.sorted() == Array(first..<seq) {
            for entrySeq in first..<seq { for event in earlier[entrySeq]! { self.events.publish(event) } }
            for event in events { self.events.publish(event) }
            position = seq
            return
        }
        known.merge(earlier) { _, new in new }
        known[seq] = events
        // In a task of its own, which the caller's cancellation does not reach: the change is stored even
        // if its request was cancelled meanwhile (too late), and a cancelled task's read of the log fails
        // at once, which left the change, and those of the same group commit waiting on this catch-up,
        // unpublished until the next poll: after their actions had answered.
        await Task { await self.catchUp(through: seq) }.value
    }

    /// Publishes every entry up to `target` (nil: up to the end of the log as it is now).
    func catchUp(through target: Int64? = nil) async {
        if let target, position >= target { return }
        if isCatchingUp {
            if let target {
                await withCheckedContinuation { waiters.append((target, $0)) }
            } else {
                moreRequested = true
            }
            return
        }
        isCatchingUp = true
        var wanted = target ?? .max
        repeat {
            moreRequested = false
            let full = await readAndPublish()
            if full == nil { break }  // the read failed: the next poll tries again
            wanted = max(target ?? 0, waiters.map(\.target).max() ?? 0)
            if full == true || moreRequested { wanted = max(wanted, position + 1) }
        } while position < wanted && wanted != .max
        isCatchingUp = false
        let ready = waiters
        waiters = []
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Starts polling the log for other processes' commits every `interval` on `clock`; the poll ends
    /// when the feed is released or the task is cancelled.
    nonisolated func follow(every interval: Duration = defaultPollInterval, clock: any Clock<Duration>) -> Task<Void, Never> {
        Task { @MainActor [weak self, database] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                guard let last = try? await database.writer.read({ try ChangeLog.lastSeq($0) }) else { continue }
                guard let self else { return }
                if last > self.position { await self.catchUp() }
            }
        }
    }

    /// Reads one batch after the position and publishes it. Returns whether the batch was full (more may
    /// follow), or nil when the read failed.
    private func readAndPublish() async -> Bool? {
        let after = position
        let knownSeqs = Set(known.keys)
        let batch: Batch
        do {
            batch = try await database.writer.read { db in try Batch(db, after: after, knownSeqs: knownSeqs) }
        } catch {
            logger.warning("could not read the change log", metadata: ["error": "\(error)"])
            return nil
        }
        if let first = batch.firstKept, first > after + 1, batch.lastWritten > after {
            // Entries this server never read were pruned: whatever it shows may be stale.
            logger.notice("the change log was pruned past this server's position; reloading", metadata: ["position": "\(after)"])
            events.publish(.resync)
        }
        for entry in batch.entries {
            for event in known.removeValue(forKey: entry.seq) ?? entry.events { events.publish(event) }
            position = entry.seq
        }
        if batch.entries.isEmpty, let first = batch.firstKept, first > after + 1 { position = max(position, batch.lastWritten) }
        // Own entries another round read first (their events were read back instead) are done too.
        known = known.filter { $0.key > position }
        return batch.entries.count == Self.batchSize
    }

    /// Entries read in one transaction, with the events of those this server did not write.
    private struct Batch: Sendable {
        var entries: [(seq: Int64, events: [ShopEvent])] = []
        var firstKept: Int64?
        var lastWritten: Int64

        init(_ db: Database, after: Int64, knownSeqs: Set<Int64>) throws {
            firstKept = try ChangeLog.firstSeq(db)
            lastWritten = try ChangeLog.lastSeq(db)
            let read = try ChangeLog.entries(db, after: after, limit: ChangeFeed.batchSize)
            // Each shopper's cart is read once, for its last cart entry of the batch: the others would show
            // the same.
            var lastCartEntry: [String: Int64] = [:]
            for entry in read where entry.kind == .cart && !knownSeqs.contains(entry.seq) { lastCartEntry[entry.subject] = entry.seq }
            // Likewise each changed product is read once, for its last entry of the batch (a market
            // simulation changes the same products many times a second).
            var lastProductEntry: [String: Int64] = [:]
            for entry in read where entry.kind == .productChanged && !knownSeqs.contains(entry.seq) { lastProductEntry[entry.subject] = entry.seq }
            for entry in read {
                guard !knownSeqs.contains(entry.seq) else {
                    entries.append((entry.seq, []))
                    continue
                }
                let isLastCart = entry.kind == .cart && lastCartEntry[entry.subject] == entry.seq
                if entry.kind == .productChanged && lastProductEntry[entry.subject] != entry.seq {
                    entries.append((entry.seq, []))
                    continue
                }
                entries.append((entry.seq, try Self.events(of: entry, db: db, readCart: isLastCart)))
            }
        }

        static func events(of entry: ChangeLog.Entry, db: Database, readCart: Bool) throws -> [ShopEvent] {
            switch entry.kind {
            case .cart:
                guard readCart else { return [] }
                // An entry from before accounts (no subject) cannot be placed: reload everything.
                guard let shopper = Shopper(storageKey: entry.subject) else { return [.resync] }
                return [.cartChanged(try StoredRows.cart(db, of: shopper), shopper: shopper)]
            case .favorite:
                guard let space = entry.subject.firstIndex(of: " "),
                      let shopper = Shopper(storageKey: String(entry.subject[..<space])) else { return [.resync] }
                let parts = entry.subject[entry.subject.index(after: space)...].split(separator: ":")
                guard parts.count == 2 else { return [] }
                return [.favoriteChanged(productId: String(parts[0]), isFavorite: parts[1] == "1", shopper: shopper)]
            case .order:
                return try StoredRows.order(db, id: entry.subject).map { [.orderPlaced($0.order, shopper: $0.shopper)] } ?? []
            case .productCreated:
                return try StoredRows.product(db, id: entry.subject).map { [.productCreated($0)] } ?? []
            case .productsDeleted:
                return [.productsDeleted(entry.subject.split(separator: ",").map(String.init))]
            case .shopper:
                return Shopper(storageKey: entry.subject).map { [.shopperDataChanged($0)] } ?? []
            case .account:
                guard let id = Int64(entry.subject) else { return [] }
                return try AccountRows.account(db, id: id).map { [.accountChanged($0)] } ?? []
            case .sessionEnded:
                return [.sessionEnded(sessionId: entry.subject)]
            case .productChanged:
                return try StoredRows.product(db, id: entry.subject).map { [.productChanged($0)] } ?? []
            case .productMoved:
                let parts = entry.subject.split(separator: " ").map(String.init)
                guard parts.count == 3 else { return [.resync] }
                return [.productMoved(productId: parts[0], from: parts[1], to: parts[2])]
            case .reset, nil:
                return [.resync]
            case .notification:
                let ids = entry.subject.split(separator: " ").map(String.init)
                guard let seq = ids.first.flatMap(InboxNotification.seq(of:)),
                      let (notification, owner) = try InboxRows.notification(db, seq: seq) else { return [] }
                return [.notificationArrived(notification, replacing: ids.dropFirst().first,
                                             unreadCount: try InboxRows.unreadCount(db, owner: owner), shopper: owner)]
            case .notificationsRead:
                let parts = entry.subject.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2, let owner = Shopper(storageKey: parts[0]) else { return [] }
                let ids = parts[1] == "*" ? nil : parts[1].split(separator: ",").map(String.init)
                return [.notificationsRead(ids: ids, unreadCount: try InboxRows.unreadCount(db, owner: owner), shopper: owner)]
            }
        }
    }
}

/// The change feed's settings as the server uses them.
public enum ChangeFeedDefaults {
    /// How often a server looks for changes other processes stored: at most this long after a commit
    /// elsewhere, every open ViewModel that shows the change starts updating.
    public static let pollInterval = Duration.milliseconds(20)
}
