import Foundation
import GRDB
import Shop

/// The shop's SQLite database: opens (and creates) the file, applies the schema migrations and
/// seeds a fresh database with the demo catalog.
///
/// Files are opened as a GRDB `DatabasePool` in WAL mode with a busy timeout, and writes run in
/// `BEGIN IMMEDIATE` transactions, so several server processes can share one file: a writer waits
/// for another process's write instead of failing.
///
/// ```swift
/// let database = try ShopDatabase(path: ShopDatabase.defaultPath())
/// let services = ShopServices.live(database: database)
/// ```
public final class ShopDatabase: Sendable {
    /// The path given to ``init(path:)``; `":memory:"` for an in-memory database.
    public let path: String
    /// The GRDB connection (a pool for files, a queue in memory).
    let writer: any DatabaseWriter
    /// The writer's group commit: how cart changes and checkouts are written.
    let commits: GroupCommit
    /// The carts this process changed last, to derive the next change's cart from.
    let cartCache = CartCache()
    /// The catalog's name order as positions, for searches (read when a search finds them stale).
    let nameOrder = NameOrder()
    /// How many writes of ``write(_:)`` are queued or running on the writer queue.
    private let queuedWrites = Locked(0)
    /// The log's sync after commits that did not wait for it (``LogSyncing/deferred``); nil when
    /// each commit syncs the log itself.
    public let logSync: WriteAheadLogSync?

    /// How long a write waits for another connection or process before failing with `storageFailed`.
    public static let busyTimeout: TimeInterval = 5

    /// Opens a database, creating and seeding it when new.
    /// - Parameters:
    ///   - path: A file path, or `":memory:"` for a private in-memory database.
    ///   - commits: Where cart changes and checkouts are committed (``CommitPlacement/writerQueue`` unless
    ///     the caller runs a thread that can commit them inline, as the server's main thread does).
    ///   - logSyncing: When the log is synced after a commit (``LogSyncing/atCommit`` unless the caller holds
    ///     back what it tells anyone until ``logSync`` says the commit is synced, as the server does).
    /// - Throws: ``ShopError`` `storageFailed` when the file cannot be opened or migrated.
    public init(path: String, commits placement: CommitPlacement = .writerQueue, logSyncing: LogSyncing = .atCommit) throws {
        self.path = path
        do {
            writer = try Self.open(path: path, configuration: Self.configuration)
            if case .deferred = logSyncing, path != ":memory:" {
                let sync = WriteAheadLogSync()
                try writer.writeWithoutTransaction { try sync.install(on: $0) }
                logSync = sync
            } else {
                logSync = nil
            }
        } catch {
            throw StorageError.openingFailed(path: path, error)
        }
        commits = GroupCommit(
            writer: writer, placement: placement, isWriterQueueBusy: { [queuedWrites] in queuedWrites.withLock { $0 > 0 } },
            willCommit: { [logSync] in logSync?.willCommit() }, didCommit: { [logSync] in logSync?.didCommit() })
    }

    /// Wraps a connection that is already open and migrated (see `ShopDatabase+Copy.swift`).
    init(path: String, writer: any DatabaseWriter) {
        self.path = path
        self.writer = writer
        logSync = nil
        commits = GroupCommit(writer: writer)
    }

    /// Runs `updates` in a transaction on the writer queue (GRDB's `write`): the writes other than the group
    /// commit's (cart changes and checkouts), counted so that an inline group commit never waits behind them.
    /// - Throws: What `updates` throws, or a `DatabaseError`.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        queuedWrites.withLock { $0 += 1 }
        defer { queuedWrites.withLock { $0 -= 1 } }
        // Counted before GRDB commits (see `WriteAheadLogSync.noteCommit`): the writer queue's commit is read
        // by other threads before its WAL hook runs.
        guard let logSync else { return try await writer.write(updates) }
        defer { logSync.didCommit() }
        return try await writer.write { db in
            let result = try updates(db)
            logSync.willCommit()
            return result
        }
    }

    /// The settings of every connection: the busy timeout, foreign keys, and the SQL functions of ``SeqSet``.
    static var configuration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.foreignKeysEnabled = true
        configuration.prepareDatabase { db in try SeqSet.register(on: db) }
        return configuration
    }

    /// Opens the connection and applies pending migrations.
    ///
    /// Two processes opening a new file at the same moment contend for it: switching a new file to
    /// WAL mode can fail with `SQLITE_BUSY` without waiting for the busy timeout, and GRDB decides
    /// which migrations are pending before taking the write lock, so one process may try a migration
    /// the other just applied. Both resolve on a retry, so opening a file is retried for up to about 2 s.
    private static func open(path: String, configuration: Configuration) throws -> any DatabaseWriter {
        SQLiteProcessSettings.applyOnce()
        var attempt = 1
        while true {
            do {
                let writer: any DatabaseWriter = path == ":memory:"
                    ? try DatabaseQueue(configuration: configuration)
                    : try DatabasePool(path: path, configuration: configuration)
                // GRDB leaves WAL pools at synchronous=NORMAL: a commit then survives the process being
                // killed but not a power loss. An acknowledged cart change or order must survive both,
                // so the writer syncs the log on every commit (~0.3 ms here).
                try writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
                try ShopSchema.migrator.migrate(writer)
                return writer
            } catch is DatabaseError where attempt < 100 && path != ":memory:" {
                attempt += 1
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    /// `$XDG_DATA_HOME/storefront/storefront.sqlite`, else `~/.local/share/storefront/storefront.sqlite`.
    /// Creates the folder when missing.
    /// - Parameter environment: The environment to read `XDG_DATA_HOME` and `HOME` from.
    /// - Throws: A file-system error when the folder cannot be created.
    public static func defaultPath(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String {
        let base: URL
        if let dataHome = environment["XDG_DATA_HOME"], !dataHome.isEmpty {
            base = URL(fileURLWithPath: dataHome, isDirectory: true)
        } else {
            let home = environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            base = home.appendingPathComponent(".local/share", isDirectory: true)
        }
        let folder = base.appendingPathComponent("storefront", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent("storefront.sqlite").path
    }

    /// Replaces the catalog with `count` generated products (ids `p-0001`…, wider when `count` has
    /// more than 4 digits), in one transaction with one prepared statement. The cart and favourites
    /// are emptied; orders are kept. Deterministic: the same count gives the same catalog.
    /// Meant for benchmarks; 100 000 products take a few seconds.
    /// - Parameter count: How many products to generate.
    /// - Throws: ``ShopError`` `storageFailed`.
    public func seed(products count: Int) async throws {
        try await StorageError.mapping {
            try await write { db in
                try db.execute(sql: """
                    DELETE FROM cart_line;
                    DELETE FROM favorite;
                    DROP TRIGGER product_fts_insert;
                    DROP TRIGGER product_fts_delete;
                    DROP TRIGGER product_fts_update;
                    DELETE FROM product;
                    INSERT INTO product_fts(product_fts) VALUES ('delete-all');
                    DELETE FROM sqlite_sequence WHERE name = 'product';
                    UPDATE cart_revision SET revision = revision + 1;
                    -- The index's triggers are off: the text version counts the new catalog itself (NameOrder).
                    UPDATE search_text_version SET version = version + 1;
                    """)
                try DemoCatalog.insert(productCount: count, into: db)
                try db.execute(sql: "INSERT INTO product_fts(product_fts) VALUES ('rebuild')")
                try db.execute(sql: ProductSearch.createTriggersSQL)
                // The catalog's size first: the search counts' recount reads the name positions, which it sizes by it.
                try CategoryCounts.recount(db)
                try SearchPrefixCounts.recount(db)
                // Every server on the file reloads what it shows.
                try ChangeLog.append(db, .reset, at: Date())
            }
        }
    }

    /// Counts every short search again (``SearchPrefixCounts``: the totals of words of up to four letters, where
    /// each one's first match lies in name order, the walks' hints), in one write: after a server older than
    /// them, or a change made behind the store (the `sqlite3` shell), left them unused and searches counting in
    /// the index. Holds the write lock while it runs: ~2.5 s at a million products.
    /// - Returns: Whether they were stale before.
    /// - Throws: ``ShopError`` `storageFailed`.
    @discardableResult
    public func recountSearch() async throws -> Bool {
        try await StorageError.mapping {
            try await write { db in
                let versions = try SearchPrefixCounts.versions(db)
                let stale = [versions.counted, versions.countedTwoLetters, versions.countedWithStarts].contains { $0 != versions.version }
                try SearchPrefixCounts.recount(db)
                return stale
            }
        }
    }

    /// Deletes a guest's cart and favourites, synchronously: for a server whose connection ended as a guest
    /// (nothing can reach that guest's data afterwards: its id was the process's own).
    /// - Throws: ``ShopError`` `storageFailed`.
    public func discardGuest(_ guestId: String) throws {
        let owner = Shopper.guest(guestId).storageKey
        do {
            try writer.write { db in
                try db.execute(sql: "DELETE FROM cart_line WHERE owner = ?", arguments: [owner])
                try db.execute(sql: "DELETE FROM cart_revision WHERE owner = ?", arguments: [owner])
                try db.execute(sql: "DELETE FROM favorite WHERE owner = ?", arguments: [owner])
            }
        } catch {
            throw StorageError.map(error)
        }
    }

    /// The number of products in the catalog.
    public func productCount() async throws -> Int {
        try await StorageError.mapping {
            try await writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM product") ?? 0 }
        }
    }

    /// The names of the applied migrations this version knows, oldest first.
    public func appliedMigrations() async throws -> [String] {
        try await StorageError.mapping {
            try await writer.read { db in try ShopSchema.migrator.appliedMigrations(db) }
        }
    }

    /// Applies pending migrations; does nothing on a current database.
    public func migrate() throws {
        do { try ShopSchema.migrator.migrate(writer) } catch { throw StorageError.map(error) }
    }
}
