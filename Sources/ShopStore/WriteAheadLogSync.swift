import CFileWriteback
import GRDB
import GRDBSQLite
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Syncs a database file's write-ahead log when its owner asks, after commits that did not sync it, and counts
/// how far the syncs have come: so that a server can commit without waiting for the disk, hold back every byte
/// it writes after a commit, and sync once before it lets them go.
///
/// With `synchronous = FULL` each commit syncs the log before it returns. A turn of the server's main thread
/// that commits several times (an add and the checkout after it, which cannot share a transaction) then waits
/// for the disk once per commit. Here the writer commits at `synchronous = NORMAL` (the pages are written to
/// the log, not synced) and the server syncs whenever its loop would poll while holding output, before it
/// writes what it held back: one sync for every commit since the last. An answer still says success only once
/// its change is on disk.
///
/// Generations: every commit of the writer's connection and every ``requestSync()`` takes the next one
/// (``required``). The group commit and `ShopDatabase.write` count a commit just before `COMMIT`
/// (`willCommit()`, `didCommit()`), before another connection can read it; a SQLite WAL hook counts every
/// commit after the fact, whatever wrote it, as a backstop. ``reached`` is the last one whose pages were
/// synced. A sync covers every page written to the log before it starts, whichever connection or process
/// wrote it.
///
/// A sync that fails leaves the file's state unknown (the kernel may have dropped the pages it could not
/// write): the process logs it and exits at once, without writing what it held back, as PostgreSQL does on a
/// failed `fsync`. Nothing acknowledged is lost.
///
/// ```swift
/// let database = try ShopDatabase(path: path, commits: .inline { MainQueue.async($0) }, logSyncing: .deferred)
/// outbox.barrier = database.logSync   // nothing written after a commit leaves before its sync
/// ```
public final class WriteAheadLogSync: Sendable {
    /// What syncs the log's descriptor: `fdatasync`, or a test's stand-in. Returns 0, or an `errno`.
    public typealias Syncer = @Sendable (_ descriptor: Int32) -> Int32
    /// What starts the writeback of the log's descriptor without waiting (`sync_file_range`), or a test's
    /// stand-in. Returns 0, or an `errno` (ignored: the sync after it reports what matters).
    public typealias Writeback = @Sendable (_ descriptor: Int32) -> Int32

    private let syncer: Syncer
    private let writeback: Writeback
    private let logger: Logger
    private let committed = Atomic<UInt64>(0)
    private let synced = Atomic<UInt64>(0)
    /// The generation of the commit under way on another thread (counted, its pages perhaps not yet written),
    /// 0 when none is: a sync meanwhile may miss its pages, so it does not count as passing it.
    private let committing = Atomic<UInt64>(0)
    /// The log's path, set by ``install(on:)``; held while syncing, so that syncs do not overlap.
    private let logPath = Mutex<String>("")
    /// The log's descriptor, opened by ``install(on:)`` (replaced under ``logPath``'s lock); read without it by the
    /// WAL hook, which must not wait for a sync.
    private let logDescriptor = Atomic<Int32>(-1)
    /// Whether a commit started the log's writeback since the last sync (``startWritebackAfterCommits(when:)``).
    private let writebackStarted = Atomic<Bool>(false)
    /// Whether a failed writeback was logged (once per process: it fails alike every time).
    private let writebackFailureLogged = Atomic<Bool>(false)
    /// When a commit starts the log's writeback; nil: never. Set once, read at every commit without a lock.
    private let writebackCondition = AtomicLazyReference<WritebackCondition>()

    /// A sync of a database's log, to be installed on its writer's connection (``install(on:)``).
    /// - Parameters:
    ///   - syncer: what syncs the log (`fdatasync` unless a test stands in for it).
    ///   - writeback: what starts the log's writeback (``startWritebackAfterCommits(when:)``).
    ///   - logger: where a failed sync is reported before the process exits.
    public init(
        syncer: @escaping Syncer = { fdatasync($0) == 0 ? 0 : errno }, writeback: @escaping Writeback = { fw_start_writeback($0) },
        logger: Logger = Logger(label: "storefront.log-sync")
    ) {
        self.syncer = syncer
        self.writeback = writeback
        self.logger = logger
    }

    /// The generation that what is written now must wait for: that of the last commit (or request).
    public var required: UInt64 { committed.load(ordering: .acquiring) }

    /// The last generation whose pages are synced.
    public var reached: UInt64 { synced.load(ordering: .acquiring) }

    /// Counts a commit made without a sync. Any thread; called by the writer's WAL hook just after any commit
    /// (which another connection may read first: a backstop for a commit made without ``willCommit()``).
    func noteCommit() {
        committed.add(1, ordering: .acquiringAndReleasing)
    }

    /// Counts the commit the writer is about to make, before another connection can read what it commits, and
    /// marks it under way until ``didCommit()``. Called on the writer, by the group commit and ``ShopDatabase``'s
    /// writes, just before `COMMIT`.
    func willCommit() {
        // Marked under way before it is counted (with at most its generation: a request may count first), so
        // that a pass that sees it counted sees it under way.
        committing.store(committed.load(ordering: .acquiring) + 1, ordering: .releasing)
        let generation = committed.add(1, ordering: .acquiringAndReleasing).newValue
        committing.store(generation, ordering: .releasing)
    }

    /// Ends what ``willCommit()`` began, whether the commit succeeded or not. On the writer.
    func didCommit() {
        committing.store(0, ordering: .releasing)
    }

    /// Asks for a sync of what the log holds now (pages another process committed and may not have synced
    /// yet): what is written from now on waits for it, as after a commit. Any thread.
    public func requestSync() {
        noteCommit()
    }

    /// Syncs the log unless every generation so far is synced, so that ``reached`` is at least what
    /// ``required`` was on the call; but not past a commit under way on another thread (whose pages the sync
    /// may miss), which a later call passes once it has ended. Blocks for the sync (~0.2 ms here); exits the
    /// process when it fails. Any thread.
    public func pass() {
        // The count first, then what is under way: a commit counted by then was marked under way before
        // (`willCommit`), and is seen so unless it has ended.
        let all = committed.load(ordering: .acquiring)
        let underWay = committing.load(ordering: .acquiring)
        let target = underWay == 0 ? all : min(all, underWay - 1)
        guard target > synced.load(ordering: .acquiring) else { return }
        logPath.withLock { path in
            // Another thread's sync, which this one waited for, may have covered it.
            guard target > synced.load(ordering: .acquiring) else { return }
            // Cleared first: a commit during the sync starts the next writeback, which the sync may not cover.
            writebackStarted.store(false, ordering: .releasing)
            let descriptor = logDescriptor.load(ordering: .acquiring)
            let error = descriptor < 0 ? EBADF : syncer(descriptor)
            if error != 0 { Self.exit(logger, "could not sync the database's log", path: path, errno: error) }
            synced.store(target, ordering: .releasing)
        }
    }

    /// Makes a commit start writing the log's new pages to the disk at once, without waiting (`sync_file_range`),
    /// when `condition` holds as it commits and no commit has started it since the last sync. The sync that
    /// ``pass()`` makes once the server has done what follows the commit (the answer, the states' patches) then
    /// finds the pages written, and waits only for the device's flush: the disk's work overlaps the server's,
    /// where a commit at `synchronous = FULL` syncs before anything follows it.
    ///
    /// The server's condition: exactly one request is in flight (the one the commit answers, nearly always). When
    /// more are (a client that sends many at once, 50 checkouts in one write), more commits follow before the sync,
    /// and a writeback started at the first would split the log's writes into more, smaller ones for the sync to
    /// wait for (3–6 % fewer checkouts a second here when each is sent with its add, or 50 at once). When none is,
    /// the commit is a background one (the analytics writer's) that no output waits for: a writeback it started
    /// would stand until the next sync, and the next request's commit would start none. A commit for which
    /// `condition` does not hold leaves the next one free to start it.
    ///
    /// It changes no guarantee: nothing counts as synced before ``pass()``'s `fdatasync` returns, and a failed
    /// writeback is that sync's to report (the first failure is logged: a system without `sync_file_range`).
    /// Only the first call takes effect.
    /// - Parameter condition: asked on the committing thread, just after the commit; must be cheap.
    public func startWritebackAfterCommits(when condition: @escaping @Sendable () -> Bool) {
        _ = writebackCondition.storeIfNil(WritebackCondition(holds: condition))
    }

    /// The condition of ``startWritebackAfterCommits(when:)``, in a class. Kept as a bare closure in a `Mutex` and
    /// read with `withLock { $0 }`, each read wrote the closure back into the `Mutex` wrapped in another pair of
    /// reabstraction thunks (two allocations): callgrind found calls ~200 thunks deep after 300 commits, and
    /// unbounded it ends in a stack overflow (swiftlang/swift#91348; a fix is proposed in swiftlang/swift#91770).
    private final class WritebackCondition: Sendable {
        let holds: @Sendable () -> Bool
        init(holds: @escaping @Sendable () -> Bool) { self.holds = holds }
    }

    /// What the WAL hook does after each commit of the writer: starts the log's writeback as
    /// ``startWritebackAfterCommits(when:)`` says.
    private func startWritebackIfDue() {
        guard !writebackStarted.load(ordering: .acquiring), let condition = writebackCondition.load(), condition.holds(),
            !writebackStarted.exchange(true, ordering: .acquiringAndReleasing)
        else { return }
        let descriptor = logDescriptor.load(ordering: .acquiring)
        guard descriptor >= 0 else { return }
        let error = writeback(descriptor)
        if error != 0, !writebackFailureLogged.exchange(true, ordering: .acquiringAndReleasing) {
            logger.notice(
                "could not start the log's writeback; its syncs do all the writing",
                metadata: ["errno": "\(error)", "error": "\(String(cString: strerror(error)))"])
        }
    }

    /// Logs why and ends the process at once, writing nothing more (no acknowledgement of what was held).
    private static func exit(_ logger: Logger, _ message: Logger.Message, path: String, errno error: Int32) -> Never {
        logger.critical(
            "\(message); exiting without acknowledging what it holds",
            metadata: ["path": "\(path)", "errno": "\(error)", "error": "\(String(cString: strerror(error)))"])
        _exit(74)  // EX_IOERR
    }

    /// Makes `db` (the writer's connection) commit without syncing and count each commit here. The hook that
    /// counts replaces SQLite's automatic checkpoint, so it checkpoints as that did (passively, once the log
    /// has as many pages as `PRAGMA wal_autocheckpoint` says).
    ///
    /// The log is the one SQLite writes (`sqlite3_filename_wal`: beside the file a symbolic link names, say),
    /// opened now, while the connection keeps it in place: no other process deletes a log while a connection
    /// to its database is open. Nothing may set `PRAGMA wal_autocheckpoint` on the connection afterwards: that
    /// replaces the hook, and commits would go uncounted.
    func install(on db: Database) throws {
        let main = sqlite3_db_filename(db.sqliteConnection, "main")
        guard let main, let walName = sqlite3_filename_wal(main) else { throw DatabaseError(resultCode: .SQLITE_CANTOPEN, message: "no log") }
        let path = String(cString: walName)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw DatabaseError(resultCode: .SQLITE_CANTOPEN, message: "cannot open the log \(path): errno \(errno)")
        }
        logPath.withLock { logPath in
            let old = logDescriptor.exchange(descriptor, ordering: .acquiringAndReleasing)
            if old >= 0 { close(old) }
            logPath = path
        }
        let pages = try Int32.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1000
        // The hook's context, kept for the connection's life (one per database opened this way, and this sync
        // with it: its descriptor stays open until the process ends).
        let context = Unmanaged.passRetained(WALHook(sync: self, autoCheckpointPages: pages)).toOpaque()
        sqlite3_wal_hook(db.sqliteConnection, { context, connection, name, pages in
            let hook = Unmanaged<WALHook>.fromOpaque(context!).takeUnretainedValue()
            hook.sync.noteCommit()
            hook.sync.startWritebackIfDue()
            if hook.autoCheckpointPages > 0, pages >= hook.autoCheckpointPages {
                sqlite3_wal_checkpoint(connection, name)
            }
            return SQLITE_OK
        }, context)
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
    }

    /// The WAL hook's context.
    private final class WALHook: Sendable {
        let sync: WriteAheadLogSync
        let autoCheckpointPages: Int32

        init(sync: WriteAheadLogSync, autoCheckpointPages: Int32) {
            self.sync = sync
            self.autoCheckpointPages = autoCheckpointPages
        }
    }
}
