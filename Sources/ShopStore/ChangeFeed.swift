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
package final class ChangeFeed {
    /// How long after a commit elsewhere the poll notices it, at most.
    nonisolated static let defaultPollInterval = ChangeFeedDefaults.pollInterval
    /// Entries read per round.
    nonisolated static let batchSize = 512

    private let source: any ChangeLogSource
    private let events: ShopEvents
    private let logger: Logger
    /// The last entry published.
    package private(set) var position: Int64
    /// Events of this server's own entries, published in place of reading them back.
    private var known: [Int64: [ShopEvent]] = [:]
    private var isCatchingUp = false
    private var moreRequested = false
    private var waiters: [(target: Int64, continuation: CheckedContinuation<Void, Never>)] = []

    /// A feed of a SQLite database, positioned at the end of its log.
    nonisolated convenience init(database: ShopDatabase, events: ShopEvents, logger: Logger = Logger(label: "storefront.feed")) {
        self.init(
            source: SQLiteChangeLogSource(database: database),
            position: (try? database.writer.read { try ChangeLog.lastSeq($0) }) ?? 0, events: events, logger: logger)
    }

    /// A feed of `source`, positioned after entry `position` (the end of the log when the server starts).
    package nonisolated init(
        source: any ChangeLogSource, position: Int64, events: ShopEvents, logger: Logger = Logger(label: "storefront.feed")
    ) {
        self.source = source
        self.events = events
        self.logger = logger
        self.position = position
    }

    /// Publishes the entries up to `seq` (this server's commit), with `events` for that entry instead of
    /// reading it back (and `earlier` for other entries of the same transaction); returns once they are
    /// published.
    package func committed(_ seq: Int64, _ events: [ShopEvent], earlier: [Int64: [ShopEvent]] = [:]) async {
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
        await published(through: seq)
    }

    /// Publishes every entry the log holds now, and returns once they are published (at once when a read of its
    /// head fails: the poll publishes them later).
    package func publishedToHead() async {
        guard let head = try? await source.lastSeq() else { return }
        await published(through: head)
    }

    /// Publishes every entry up to `seq`, reading the log, and returns once they are published (at once when
    /// they are): for an answer that must come after what a commit shows, this server's (``committed(_:_:earlier:)``)
    /// or another's (an idempotent replay of another server's change).
    package func published(through seq: Int64) async {
        guard position < seq else { return }
        // In a task of its own, which the caller's cancellation does not reach: the change is stored even
        // if its request was cancelled meanwhile (too late), and a cancelled task's read of the log fails
        // at once, which left the change, and those of the same group commit waiting on this catch-up,
        // unpublished until the next poll: after their actions had answered.
        await Task { await self.catchUp(through: seq) }.value
        // A failed read of the log leaves the change unpublished: read again a few times (about 2 s in all)
        // before the action answers, so that its answer still comes after its state. Past that, the change
        // is stored and answered as such; the feed's poll publishes it when the log can be read again.
        var pause = Duration.milliseconds(20)
        while position < seq, pause <= .milliseconds(1_280) {
            try? await Task.sleep(for: pause)
            pause *= 2
            await Task { await self.catchUp(through: seq) }.value
        }
    }

    /// Publishes every entry up to `target` (nil: up to the end of the log as it is now).
    package func catchUp(through target: Int64? = nil) async {
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
    /// - Parameter taskExecutor: the executor the poll's task prefers (the server's main-queue executor: each
    ///   round's waits then resume on the main queue, not by way of the global pool); nil: none.
    package nonisolated func follow(
        every interval: Duration = defaultPollInterval, clock: any Clock<Duration>, taskExecutor: (any TaskExecutor)? = nil
    ) -> Task<Void, Never> {
        let poll: @MainActor () async -> Void = { [weak self, source, logger] in
            var failing = false
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                let last: Int64
                do {
                    last = try await source.lastSeq()
                    if failing { logger.notice("the change log can be read again") }
                    failing = false
                } catch {
                    // Said once per run of failures (the next poll reads again): until then, other processes'
                    // changes are not seen.
                    // A lock another connection holds a moment (SQLITE_BUSY) is no news.
                    let level: Logger.Level = (error as? DatabaseError)?.resultCode == .SQLITE_BUSY ? .debug : .warning
                    if !failing { logger.log(level: level, "could not read the change log's head", metadata: ["error": "\(error)"]) }
                    failing = true
                    continue
                }
                guard let self else { return }
                if last > self.position { await self.catchUp() }
            }
        }
        if let taskExecutor { return Task(executorPreference: taskExecutor) { await poll() } }
        return Task { @MainActor in await poll() }
    }

    /// Reads one batch after the position and publishes it. Returns whether the batch was full (more may
    /// follow), or nil when the read failed.
    private func readAndPublish() async -> Bool? {
        let after = position
        let batch: ChangeBatch
        do {
            batch = try await source.batch(after: after, knownSeqs: Set(known.keys), shown: events.shownShoppers, limit: Self.batchSize)
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
}

/// The change feed's settings as the server uses them.
public enum ChangeFeedDefaults {
    /// How often a server looks for changes other processes stored: at most this long after a commit
    /// elsewhere, every open ViewModel that shows the change starts updating.
    public static let pollInterval = Duration.milliseconds(20)
}
