import Foundation
import Logging
import NIOCore
import PostgresNIO
import Shop
import ShopStore

/// The shop's PostgreSQL database: a connection pool (postgres-nio's `PostgresClient`), the schema
/// migrations, and the transactions every service runs in.
///
/// Many server processes on many hosts share one database. Writes run in `READ COMMITTED` transactions
/// that lock the rows they depend on (see `PostgresOrderService` for why row locks rather than
/// `SERIALIZABLE`); a transaction the server rolled back for a deadlock or a serialization conflict is
/// run again, up to ``conflictRetries`` times, before the caller sees a retryable error. Every operation
/// has a deadline (``answerTimeout``, 5 s unless opened with another): a database that does not answer, because it is down or the network
/// to it is cut, fails the request with a retryable error instead of holding it.
///
/// ```swift
/// let database = try await PostgresShopDatabase.open(url: PostgresURL("postgres://shop@db:5432/shop"))
/// let services = ShopServices.postgres(database: database)
/// ```
public final class PostgresShopDatabase: Sendable {
    /// The address (its `description` hides the password).
    public let url: PostgresURL
    /// The pool.
    let client: PostgresClient
    /// The last change-log entry when the database was opened: where this server's feed starts.
    let lastSeqAtOpen: Int64
    let logger: Logger
    /// Until when requests fail at once, after one found the database not answering (see ``read(timeout:_:)``).
    private let unansweredUntil = Locked<ContinuousClock.Instant?>(nil)
    /// How long, after an operation found the database not answering within its deadline, the next ones fail
    /// at once instead of each waiting out a deadline of its own.
    static let failFastWindow = Duration.seconds(1)
    /// The change-log entries this process appended (see ``OwnEntries``).
    let ownEntries = OwnEntries()
    /// The event loop of the connection the last operation had: the next one starts there, as the pool most
    /// often hands out that connection again (its statements then run where it started, with no hop).
    private let lastLoop = Locked<(any EventLoop)?>(nil)
    private let running: Task<Void, Never>
    /// Work that lives as long as the database (the change feed's listener), cancelled when it is released.
    private let kept = Locked<[Task<Void, Never>]>([])

    /// How long one database operation (a read, or a whole write transaction with its retries) may take
    /// before the request fails with a retryable `storageFailed` error: the same bound as SQLite's busy timeout.
    public static let defaultAnswerTimeout = Duration.seconds(5)
    /// This database's deadline for one operation (``defaultAnswerTimeout`` unless opened with another).
    public let answerTimeout: Duration
    /// How long opening may take: applying the migrations of a new database (seeding its catalog, building
    /// its search index) is work, not a wait, and it happens once.
    public static let openTimeout = Duration.seconds(120)
    /// How long replacing the catalog may take (`storefront seed`: a million products take minutes).
    public static let seedTimeout = Duration.seconds(3_600)
    /// How often a transaction rolled back by a conflict is run again.
    static let conflictRetries = 8
    /// Connections each server process keeps at most (writes from one process are few at a time: its
    /// clients' actions run one after another on the main actor, plus the analytics writer and reads).
    public static let maximumConnections = 8

    private init(
        url: PostgresURL, client: PostgresClient, running: Task<Void, Never>, lastSeq: Int64, answerTimeout: Duration, logger: Logger
    ) {
        self.url = url
        self.answerTimeout = answerTimeout
        self.client = client
        self.running = running
        lastSeqAtOpen = lastSeq
        self.logger = logger
    }

    deinit {
        running.cancel()
        for task in kept.withLock({ $0 }) { task.cancel() }
    }

    /// Keeps `task` running until the database is released.
    func keep(_ task: Task<Void, Never>) {
        kept.withLock { $0.append(task) }
    }

    /// Connects, applies pending migrations (creating the tables and the demo catalog in an empty
    /// database) and returns the open database.
    /// - Throws: ``ShopError`` `storageFailed` naming the database when it cannot be reached or migrated.
    /// - Parameters:
    ///   - url: The database.
    ///   - answerTimeout: How long one operation may take before its request fails with a retryable error.
    ///   - logger: Where the pool and the listener log.
    public static func open(
        url: PostgresURL, answerTimeout: Duration = defaultAnswerTimeout, logger: Logger = Logger(label: "storefront.postgres")
    ) async throws -> PostgresShopDatabase {
        var configuration = url.clientConfiguration()
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 1
        configuration.options.connectTimeout = answerTimeout
        // The pool's keep-alive notices a connection the network dropped before a request does.
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(10))
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let running = Task { await client.run() }
        do {
            let lastSeq = try await withDeadline(openTimeout) { _ in
                try await client.withConnection { connection in
                    let session = PostgresSession(connection: connection, logger: logger)
                    try await PostgresSchema.migrate(session)
                    return try await PostgresChangeLog.lastSeq(session)
                }
            }
            return PostgresShopDatabase(
                url: url, client: client, running: running, lastSeq: lastSeq, answerTimeout: answerTimeout, logger: logger)
        } catch {
            running.cancel()
            guard var shopError = PostgresStorageError.map(error) as? ShopError else { throw error }
            shopError.message = "Cannot open the database \(url): \(shopError.message)"
            shopError.details["database"] = url.description
            throw shopError
        }
    }

    /// Runs `body` on a pooled connection, outside a transaction: for single-statement reads.
    /// - Parameters:
    ///   - timeout: the deadline (``answerTimeout`` unless given).
    ///   - failingFast: whether to fail at once while the database is known not to answer (see below); the
    ///     change feed's reads do not, as they must go on trying.
    func read<T: Sendable>(
        timeout: Duration? = nil, failingFast: Bool = true, _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws -> T {
        let timeout = timeout ?? answerTimeout
        // A client's actions run one after another: when the database cannot be reached (a cut network),
        // each waiting out its own deadline would answer the tenth action pipelined behind the first after
        // 50 s. For a moment after an operation got no connection within its deadline, they fail at once;
        // the first after that tries again. An operation that had its connection and was merely slow (a
        // long query, a lock wait) does not count: the database answers.
        if failingFast, let until = unansweredUntil.withLock({ $0 }), ContinuousClock.now < until {
            throw PostgresStorageError.map(AnswerTimeout())
        }
        let connected = Locked(false)
        do {
            return try await PostgresStorageError.mapping {
                let loop = lastLoop.withLock { $0 } ?? PostgresClient.defaultEventLoopGroup.next()
                return try await Self.withDeadline(timeout, on: loop) { [client, logger, ownEntries, lastLoop] deadline in
                    try await client.withConnection { connection in
                        connected.withLock { $0 = true }
                        lastLoop.withLock { $0 = connection.eventLoop }
                        // Answered already (the lease took the whole deadline): the work must not start.
                        try deadline.check()
                        let session = PostgresSession(connection: connection, logger: logger, ownEntries: ownEntries, deadline: deadline)
                        return try await withTaskExecutorPreference(EventLoopTaskExecutor.of(connection.eventLoop)) {
                            try await Self.onConnectionLoop(body, session)
                        }
                    }
                }
            }
        } catch let error as ShopError where error.details["code"] == "timeout" {
            if !connected.withLock({ $0 }) { unansweredUntil.withLock { $0 = ContinuousClock.now + Self.failFastWindow } }
            throw error
        }
    }

    /// Runs `body` where the task prefers to run (``EventLoopTaskExecutor``: its connection's event loop): every
    /// statement's answer then resumes it on the thread that read it. `@concurrent` makes the hop to the preferred
    /// executor happen here, before the body's first statement; a nonisolated-nonsending call would go on where
    /// the lease resumed it (the pool's thread) until its first suspension.
    @concurrent
    private static func onConnectionLoop<T: Sendable>(
        _ body: @Sendable (PostgresSession) async throws -> T, _ session: PostgresSession
    ) async throws -> T {
        try await body(session)
    }

    /// Runs `body` in one read-only `REPEATABLE READ` transaction: several statements that see one snapshot.
    /// - Parameter failingFast: as for ``read(timeout:failingFast:_:)`` (the change feed's reads pass false).
    func snapshot<T: Sendable>(
        failingFast: Bool = true, _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws -> T {
        try await read(failingFast: failingFast) { session in
            try await Self.transaction(session, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
        }
    }

    /// Runs `body` in a `READ COMMITTED` transaction, again when the server rolls it back for a deadlock or
    /// a serialization conflict; returns once it committed.
    /// - Throws: What `body` throws, or ``ShopError`` `storageFailed` (retryable when the database is
    ///   unavailable or the conflicts persisted).
    func write<T: Sendable>(
        timeout: Duration? = nil, _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws -> T {
        try await read(timeout: timeout) { session in
            var attempt = 1
            while true {
                do {
                    return try await Self.transaction(session, begin: "BEGIN", body)
                } catch where attempt < Self.conflictRetries && PostgresStorageError.isConflict(error) {
                    attempt += 1
                }
            }
        }
    }

    private static func transaction<T>(
        _ session: PostgresSession, begin: PostgresQuery, _ body: (PostgresSession) async throws -> T
    ) async throws -> T {
        try await session.execute(begin)
        do {
            let value = try await body(session)
            // A request answered with a timeout meanwhile must not be stored after all: roll back. Only a
            // COMMIT already sent when the deadline passes may still be stored (see `PostgresStorageError`).
            try session.deadline?.check()
            try await session.execute("COMMIT")
            return value
        } catch {
            // After a failed COMMIT the server has ended the transaction already; the ROLLBACK is then a no-op.
            _ = try? await session.execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body`, or fails with ``AnswerTimeout`` when it has not finished after `timeout`.
    ///
    /// The operation is not cancelled at the deadline (postgres-nio cannot abandon a query in flight): it
    /// finishes or fails on its own when the connection does, holding its pooled connection until then.
    /// What matters here is that the request is answered within a bounded time, and that work answered as
    /// failed is not stored afterwards: `body` gets the ``Deadline``, which a transaction checks before its
    /// COMMIT (and the lease before the work starts).
    ///
    /// Both the timer and the task that runs `body` live on an event loop of the client's group, not in the
    /// global pool: a task or a sleep there woke one of the pool's threads each time (twice for the timer, once
    /// to start it and once when it was cancelled), on every operation.
    static func withDeadline<T: Sendable>(
        _ timeout: Duration, on loop: any EventLoop = PostgresClient.defaultEventLoopGroup.next(),
        _ body: @escaping @Sendable (Deadline) async throws -> T
    ) async throws -> T {
        let deadline = Deadline()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let timer = loop.scheduleTask(in: TimeAmount(timeout)) {
                if deadline.answer() { continuation.resume(throwing: AnswerTimeout()) }
            }
            Task(executorPreference: EventLoopTaskExecutor.of(loop)) {
                let result: Result<T, any Error>
                do { result = .success(try await body(deadline)) } catch { result = .failure(error) }
                timer.cancel()
                if deadline.answer() { continuation.resume(with: result) }
            }
        }
    }

    // MARK: Maintenance, as ShopDatabase offers it

    /// Replaces the catalog with `count` generated products (the same ones ``ShopDatabase/seed(products:)``
    /// generates), in one transaction. The carts and favourites are emptied; orders are kept. Every server
    /// on the database reloads what it shows.
    /// - Throws: ``ShopError`` `storageFailed`.
    public func seed(products count: Int) async throws {
        try await write(timeout: Self.seedTimeout) { session in
            // Products created, moved or deleted by other servers meanwhile wait for the seed (or it for them):
            // otherwise a product created while the seed ran would outlive it uncounted by the recount,
            // whose snapshot is older than that product's commit.
            try await session.execute("LOCK TABLE product IN SHARE ROW EXCLUSIVE MODE")
            try await session.execute("DELETE FROM cart_line")
            try await session.execute("DELETE FROM favorite")
            try await session.execute("DELETE FROM price_point")
            try await session.execute("DELETE FROM product")
            try await session.execute("UPDATE cart_revision SET revision = revision + 1")
            try await PostgresDemoCatalog.insert(productCount: count, into: session)
            try await PostgresCategoryCounts.recount(session)
            try await PostgresChangeLog.append(session, .reset, at: Date())
        }
    }

    /// Deletes a guest's cart and favourites: for a server whose connection ended as a guest.
    /// - Throws: ``ShopError`` `storageFailed`.
    public func discardGuest(_ guestId: String) async throws {
        let owner = Shopper.guest(guestId).storageKey
        try await write { session in
            try await session.execute("DELETE FROM cart_line WHERE owner = \(owner)")
            try await session.execute("DELETE FROM cart_revision WHERE owner = \(owner)")
            try await session.execute("DELETE FROM favorite WHERE owner = \(owner)")
        }
    }

    /// The number of products in the catalog.
    public func productCount() async throws -> Int {
        try await read { try await $0.value("SELECT COUNT(*) FROM product", as: Int.self) ?? 0 }
    }

    /// The names of the applied migrations this version knows, oldest first (as SQLite's).
    public func appliedMigrations() async throws -> [String] {
        let applied = try await read { session in
            Set(try await session.rows("SELECT identifier FROM storefront_migrations").map { try $0.decode(String.self) })
        }
        return PostgresSchema.migrations.map(\.identifier).filter(applied.contains)
    }
}

/// Whether an operation's request has been answered: by the operation itself, or by its deadline.
final class Deadline: Sendable {
    private let answered = Locked(false)

    /// Marks the request answered; returns whether this call did (only the first answer is given).
    func answer() -> Bool {
        answered.withLock { done in
            defer { done = true }
            return !done
        }
    }

    /// Throws ``AnswerTimeout`` when the deadline has answered the request already.
    func check() throws {
        if answered.withLock({ $0 }) { throw AnswerTimeout() }
    }
}
