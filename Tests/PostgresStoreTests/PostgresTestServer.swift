import Credentials
import Foundation
import Logging
import PostgresNIO
@testable import PostgresStore
import Shop
@testable import ShopStore
import TestWaits
import Testing

// The helpers of the account, notification and analytics tests.

/// A date the test moves (sign-in locks, token expiry, pruning).
final class PostgresTestNow: Sendable {
    private let date = Locked(Date(timeIntervalSince1970: 1_750_000_000))
    /// The date now.
    var now: Date { date.withLock { $0 } }
    /// Moves the date on.
    func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

/// One server process on a test database: its own pool, event hub and change feed, and the services under
/// test (the cheapest password hash).
@MainActor
struct PostgresTestServer {
    /// This server's pool.
    let database: PostgresShopDatabase
    /// Where this server's services publish.
    let events = ShopEvents()
    /// This server's change feed (nothing wakes it for other servers' commits: a test reads them back).
    let feed: ChangeFeed
    /// The services under test, and those that make their data.
    let accounts: PostgresAccountService
    let notifications: PostgresNotificationService
    let cart: PostgresCartService
    let favorites: PostgresFavoritesService

    /// A server on a fresh database.
    init(now: PostgresTestNow) async throws {
        self.init(database: try await TestPostgres.freshDatabase(), now: now)
    }

    /// Another server on `database` (a pool of its own, as another process would have).
    init(sharing database: PostgresShopDatabase, now: PostgresTestNow) async throws {
        self.init(database: try await TestPostgres.open(url: database.url), now: now)
    }

    private init(database: PostgresShopDatabase, now: PostgresTestNow) {
        self.database = database
        feed = ChangeFeed(source: PostgresChangeLogSource(database: database), position: database.lastSeqAtOpen, events: events)
        let clock: @Sendable () -> Date = { now.now }
        accounts = PostgresAccountService(
            database: database, feed: feed, hasher: PasswordHasher(cost: .minimum), now: clock, gate: HashingGate(limit: 2))
        notifications = PostgresNotificationService(database: database, feed: feed, events: events, now: clock)
        cart = PostgresCartService(database: database, feed: feed, now: clock)
        favorites = PostgresFavoritesService(database: database, feed: feed, now: clock)
    }

    /// The rows of `table` (which may carry a `WHERE` clause).
    func count(_ table: String) async throws -> Int {
        try await database.read { try await $0.value(PostgresQuery(unsafeSQL: "SELECT COUNT(*) FROM \(table)"), as: Int.self) ?? 0 }
    }

    /// The change log's entries since the server started, oldest first.
    func logged() async throws -> [PostgresLogEntry] {
        try await database.read { [database] session in
            try await session.rows("SELECT kind, subject FROM change_log WHERE seq > \(database.lastSeqAtOpen) ORDER BY seq").map { row in
                let (kind, subject) = try row.decode((String, String).self)
                return PostgresLogEntry(kind: kind, subject: subject)
            }
        }
    }
}

/// A change-log entry as stored.
struct PostgresLogEntry: Equatable, Sendable {
    /// What changed (`ChangeLog.Kind`'s raw value).
    var kind: String
    /// What it changed.
    var subject: String
}

/// Records the events published on a hub.
@MainActor
final class PostgresEventRecorder {
    /// The events published so far, in order.
    private(set) var events: [ShopEvent] = []
    private var subscription: ShopSubscription?

    /// Starts recording what `hub` publishes.
    init(_ hub: ShopEvents) {
        subscription = hub.subscribe { [weak self] in self?.events.append($0) }
    }
}

/// A connection of its own to a test database, outside the store: another program's transaction.
struct PostgresTestConnection {
    private let connection: PostgresConnection
    private let logger = Logger(label: "test")

    /// Connects to the database at `url`.
    init(_ url: PostgresURL) async throws {
        connection = try await PostgresConnection.connect(configuration: try url.connectionConfiguration(), id: 3, logger: logger)
    }

    /// Runs one statement.
    func execute(_ sql: String) async throws {
        _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
    }

    /// Returns once `count` other sessions on this database wait for a lock (polling the server; see `settle`).
    func waitForLockWaiters(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await settle(until: {
            let rows = try await connection.query("""
                SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                """, logger: logger).collect()
            return try rows.first?.decode(Int.self) ?? 0 >= count
        }, sourceLocation: sourceLocation)
    }

    /// Closes the connection (ending an open transaction with a rollback).
    func close() async throws {
        try await connection.close()
    }
}
