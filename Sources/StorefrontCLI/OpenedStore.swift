import Credentials
import Foundation
import JSONRPC
import Logging
import PostgresStore
import Shop
import ShopStore

/// The database a command opened: the embedded SQLite file (the default) or a PostgreSQL server, chosen by
/// the form of `--database` (`postgres://…` or `postgresql://…` for PostgreSQL, a path otherwise).
enum OpenedStore {
    case sqlite(ShopDatabase)
    case postgres(PostgresShopDatabase)

    /// What was opened, for logs and messages (a PostgreSQL address without its password).
    var description: String {
        switch self {
        case .sqlite(let database): database.path
        case .postgres(let database): database.url.description
        }
    }

    /// What the server logs when it starts serving: the database, and for SQLite whether the process-wide
    /// settings (``SQLiteProcessSettings``) were applied before the first connection.
    var logMetadata: Logger.Metadata {
        switch self {
        case .sqlite:
            let result = SQLiteProcessSettings.result
            return ["database": "\(description)", "sqliteSettings": "\(result == 0 ? "applied" : "refused (\(result))")"]
        case .postgres: return ["database": "\(description)"]
        }
    }

    /// What the server's output waits for: a SQLite file's log sync when its commits do not wait for it
    /// (``LogSyncing/deferred``), so that nothing said after a commit leaves before the commit is
    /// on disk; nil when commits are durable when they return (PostgreSQL, `:memory:`, a sync at each commit).
    var outputBarrier: (any OutputBarrier)? {
        switch self {
        case .sqlite(let database): database.logSync
        case .postgres: nil
        }
    }

    /// Makes a SQLite file's commits start their log's writeback when `condition` holds
    /// (``WriteAheadLogSync/startWritebackAfterCommits(when:)``); nothing for PostgreSQL, `:memory:`, or commits
    /// that sync themselves.
    func startWritebackAfterCommits(when condition: @escaping @Sendable () -> Bool) {
        if case .sqlite(let database) = self { database.logSync?.startWritebackAfterCommits(when: condition) }
    }

    /// Syncs what was committed since the last sync (the server's end).
    func syncLog() {
        if case .sqlite(let database) = self { database.logSync?.pass() }
    }

    /// Every service over the database (see `ShopServices.live` and `ShopServices.postgres`): a SQLite file
    /// polls its change log for other processes' commits (its task preferring `taskExecutor`); PostgreSQL
    /// listens for them. Of other processes' changes of one shopper's data, the feed reads only those of the
    /// shoppers this process's sessions show (`ShownShoppers`).
    @MainActor
    func services(
        faults: FaultPlan, clock: any Clock<Duration>, market: MarketSimulation?, taskExecutor: (any TaskExecutor)? = nil
    ) -> ShopServices {
        let events = ShopEvents(shownShoppers: ShownShoppers())
        return switch self {
        case .sqlite(let database):
            .live(
                database: database, faults: faults, clock: clock, events: events, followingOtherProcesses: ChangeFeedDefaults.pollInterval,
                market: market, taskExecutor: taskExecutor)
        case .postgres(let database):
            .postgres(database: database, faults: faults, clock: clock, events: events, market: market)
        }
    }

    /// Replaces the catalog with `count` generated products.
    func seed(products count: Int) async throws {
        switch self {
        case .sqlite(let database): try await database.seed(products: count)
        case .postgres(let database): try await database.seed(products: count)
        }
    }

    /// The number of products in the catalog.
    func productCount() async throws -> Int {
        switch self {
        case .sqlite(let database): try await database.productCount()
        case .postgres(let database): try await database.productCount()
        }
    }

    /// Deletes a guest's cart and favourites (the connection that was that guest ended). Blocks; on
    /// PostgreSQL for at most the database's answer timeout.
    func discardGuest(_ guestId: String) throws {
        switch self {
        case .sqlite(let database): try database.discardGuest(guestId)
        case .postgres(let database): try runBlocking { try await database.discardGuest(guestId) }
        }
    }

    /// How long the server waits, at exit, for buffered analytics events to be stored.
    var flushTimeout: TimeInterval {
        switch self {
        case .sqlite: ShopDatabase.busyTimeout
        case .postgres(let database): TimeInterval(database.answerTimeout.components.seconds)
        }
    }
}

/// The log sync is what the server's outbox waits for: its generations are the commits.
extension WriteAheadLogSync: OutputBarrier {}
