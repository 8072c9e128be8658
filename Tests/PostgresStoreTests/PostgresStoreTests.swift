import Foundation
import Logging
import PostgresNIO
@testable import PostgresStore
import Shop
@testable import ShopStore
import TestWaits
import Testing

/// The PostgreSQL store's schema, cart, checkout and change feed, against a real cluster. "Servers" here are
/// separate `PostgresShopDatabase` instances (each its own pool and feed), as separate processes would be.
@MainActor
@Suite(.enabled(if: TestPostgres.isAvailable, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster to test against (scripts/test.sh starts one)"))
struct PostgresStoreTests {
    /// One server's services of interest, over its own pool and feed.
    struct Server {
        let database: PostgresShopDatabase
        let events: ShopEvents
        let feed: ChangeFeed
        let cart: PostgresCartService
        let orders: PostgresOrderService

        init(_ database: PostgresShopDatabase) {
            self.database = database
            events = ShopEvents()
            feed = ChangeFeed(source: PostgresChangeLogSource(database: database), position: database.lastSeqAtOpen, events: events)
            cart = PostgresCartService(database: database, feed: feed, now: { Date() })
            orders = PostgresOrderService(database: database, feed: feed, now: { Date() })
        }
    }

    @Test func aNewDatabaseHasTheSameMigrationsAndCatalogAsSQLite() async throws {
        let postgres = try await TestPostgres.freshDatabase()
        let sqlite = try ShopDatabase(path: ":memory:")
        // v11 makes SQLite's in-memory name order (NameOrder) see a change of a product's id; PostgreSQL keeps none.
        // v12 counts SQLite's two-letter searches (SearchPrefixCounts); PostgreSQL's search counts none.
        // v14 drops SQLite's AUTOINCREMENT counters of the log and the cart lines; PostgreSQL's are sequences.
        let sqliteOnly: Set = ["v11-product-key-changes", "v12-search-counts-two-letters", "v13-search-walk-starts", "v14-lean-writes"]
        #expect(try await postgres.appliedMigrations() == (try await sqlite.appliedMigrations()).filter { !sqliteOnly.contains($0) })
        #expect(try await postgres.productCount() == DemoCatalog.defaultProductCount)
        let server = Server(postgres)
        let product = try await PostgresRows.product(#require(try await postgres.read { session in
            try await session.first("SELECT \(unescaped: PostgresRows.productColumns) FROM product p WHERE p.id = 'p-0007'")
        }))
        let stored = try await LiveCatalogServiceProbe.product(id: "p-0007", in: sqlite)
        #expect(product == stored)
        _ = server
    }

    @Test func serversOpeningANewDatabaseAtOnceMigrateItOnce() async throws {
        let url = try await TestPostgres.freshURL()
        let opening = (0..<4).map { _ in Task { try await TestPostgres.open(url: url).productCount() } }
        var opened: [Int] = []
        for task in opening { opened.append(try await task.value) }
        #expect(opened == Array(repeating: DemoCatalog.defaultProductCount, count: 4))
    }

    @Test func cartChangesAreStoredPublishedAndVersioned() async throws {
        let server = Server(try await TestPostgres.freshDatabase())
        let shopper = Shopper.guest("g1")
        var published: [Cart] = []
        let subscription = server.events.subscribe { event in
            if case .cartChanged(let cart, _) = event { published.append(cart) }
        }
        defer { subscription.cancel() }
        let added = try await server.cart.add(productId: "p-0001", quantity: 1, for: shopper)
        try await server.cart.add(productId: "p-0002", quantity: 1, for: shopper)
        let changed = try await server.cart.setQuantity(productId: "p-0001", quantity: 2, for: shopper)
        #expect(added.revision == 1 && changed.revision == 3)
        #expect(changed.lines.map(\.productId) == ["p-0001", "p-0002"] && changed.lines[0].quantity == 2)
        // Published before each call returned, in order.
        #expect(published.map(\.revision) == [1, 2, 3])
        let removed = try await server.cart.remove(productId: "p-0002", for: shopper)
        #expect(removed.lines.map(\.productId) == ["p-0001"])
        await #expect(throws: ShopError.self) { try await server.cart.remove(productId: "p-0002", for: shopper) }
        #expect(try await server.cart.cart(of: shopper) == removed)
        #expect(try await server.cart.clear(for: shopper).isEmpty)
    }

    @Test func aKeyedCartChangeRetriedIsAppliedOnce() async throws {
        let server = Server(try await TestPostgres.freshDatabase())
        let shopper = Shopper.guest("g1")
        let key = IdempotencyKey(key: "k-1", fingerprint: "cart/add p-0001 1")
        for _ in 0..<3 {
            try await IdempotencyKey.$current.withValue(key) {
                _ = try await server.cart.add(productId: "p-0001", quantity: 1, for: shopper)
            }
        }
        #expect(try await server.cart.cart(of: shopper).lines.first?.quantity == 1)
        let reused = IdempotencyKey(key: "k-1", fingerprint: "cart/add p-0002 1")
        await #expect(throws: ShopError.self) {
            try await IdempotencyKey.$current.withValue(reused) {
                _ = try await server.cart.add(productId: "p-0002", quantity: 1, for: shopper)
            }
        }
    }

    /// Eight servers check out at once, each for its own account, the same product with 5 in stock: exactly
    /// five orders are placed, the others are refused for stock, and the stock ends at 0.
    @Test func concurrentCheckoutsFromManyServersNeverOversell() async throws {
        let url = try await TestPostgres.freshURL()
        var servers: [Server] = []
        for _ in 0..<8 { servers.append(Server(try await TestPostgres.open(url: url))) }
        let product = "p-0003"
        _ = try await servers[0].database.write { session in
            try await session.execute("UPDATE product SET stock = 5, maxPerOrder = 5 WHERE id = \(product)")
        }
        for (index, server) in servers.enumerated() {
            try await server.cart.add(productId: product, quantity: 1, for: .account(Int64(index + 1)))
        }
        let checkouts = servers.indices.map { index in
            let orders = servers[index].orders
            return Task { @MainActor () -> Result<Order, ShopError> in
                do { return .success(try await orders.placeOrder(expectedRevision: nil, for: .account(Int64(index + 1)))) }
                catch { return .failure(error as? ShopError ?? ShopError(reason: "unexpected", message: "\(error)")) }
            }
        }
        var outcomes: [Result<Order, ShopError>] = []
        for checkout in checkouts { outcomes.append(await checkout.value) }
        let placed = outcomes.compactMap { try? $0.get() }
        let refused = outcomes.compactMap { outcome -> ShopError? in if case .failure(let error) = outcome { error } else { nil } }
        #expect(placed.count == 5)
        #expect(Set(placed.map(\.id)).count == 5)
        #expect(refused.count == 3)
        #expect(refused.allSatisfy { $0.reason == ShopError.Reason.outOfStock || $0.reason == ShopError.Reason.quantityExceedsStock })
        let stock = try await servers[0].database.read { try await $0.value("SELECT stock FROM product WHERE id = \(product)", as: Int.self) }
        #expect(stock == 0)
    }

    /// Writers on several servers at once: the log's numbers are gap-free, and a follower that reads past
    /// its position publishes every change once, in number order.
    @Test func theChangeLogIsNumberedInCommitOrderAcrossServers() async throws {
        let url = try await TestPostgres.freshURL()
        var writers: [Server] = []
        for _ in 0..<4 { writers.append(Server(try await TestPostgres.open(url: url))) }
        let follower = Server(try await TestPostgres.open(url: url))
        var seen: [Int64] = []
        let subscription = follower.events.subscribe { event in
            if case .cartChanged(let cart, _) = event { seen.append(cart.revision) }
        }
        defer { subscription.cancel() }
        let perWriter = 15
        _ = try await follower.database.write { session in
            try await session.execute("UPDATE product SET stock = 1000, maxPerOrder = 1000 WHERE id = 'p-0010'")
        }
        await follower.feed.catchUp()
        let writing = writers.indices.map { index in
            let cart = writers[index].cart
            return Task { @MainActor in
                // One shopper per writer: its revisions count its changes.
                for _ in 0..<perWriter { try await cart.add(productId: "p-0010", quantity: 1, for: .guest("w\(index)")) }
            }
        }
        for task in writing { try await task.value }
        let seqs = try await follower.database.read { session in
            try await session.rows("SELECT seq FROM change_log ORDER BY seq").map { try $0.decode(Int64.self) }
        }
        #expect(seqs == Array(1...Int64(writers.count * perWriter)))
        await follower.feed.catchUp()
        #expect(follower.feed.position == Int64(writers.count * perWriter))
        // Each shopper's cart is read once per batch for its last entry; its last revision is shown.
        #expect(seen.contains(Int64(perWriter)))
    }

    /// The listener's connection is terminated by the server (`pg_terminate_backend`): it reconnects, and a
    /// change stored meanwhile by another server is published after all.
    @Test func theListenerReconnectsAfterItsConnectionIsTerminated() async throws {
        let url = try await TestPostgres.freshURL()
        let writer = Server(try await TestPostgres.open(url: url))
        let follower = try await ListeningFollower(url: url)
        defer { follower.stop() }
        let carts = { follower.carts }

        try await waitForListener(on: url)
        try await writer.cart.add(productId: "p-0001", quantity: 1, for: .guest("a"))
        await settle { carts().count >= 1 }
        #expect(carts().last?.revision == 1)

        let terminated = try await TestPostgres.execute("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = '\(url.database)' AND query LIKE 'LISTEN%'
            """, on: url)
        #expect(terminated.count == 1)
        try await writer.cart.add(productId: "p-0001", quantity: 1, for: .guest("a"))
        // Stored while nobody listened (or just after): published once the listener is back.
        await settle { carts().count >= 2 }
        #expect(carts().last?.revision == 2)
        try await waitForListener(on: url)
        try await writer.cart.add(productId: "p-0001", quantity: 1, for: .guest("a"))
        await settle { carts().count >= 3 }
        #expect(carts().last?.revision == 3)
    }

    /// A notification of an entry this process noted as its own (a number it took in a transaction that rolled
    /// back, given out again to another server) is skipped, then checked again: the change is published after
    /// all, for each of several such entries in a row (which share one recheck).
    @Test func entriesMistakenForOwnOnesArePublishedByTheRecheck() async throws {
        let url = try await TestPostgres.freshURL()
        let writer = Server(try await TestPostgres.open(url: url))
        let follower = try await ListeningFollower(url: url)
        defer { follower.stop() }
        try await waitForListener(on: url)

        let head = try await follower.server.database.read { try await PostgresChangeLog.lastSeq($0) }
        for seq in head + 1...head + 3 { follower.server.database.ownEntries.note(seq) }
        for _ in 0..<3 { try await writer.cart.add(productId: "p-0001", quantity: 1, for: .guest("a")) }
        await settle { follower.carts.contains { $0.revision == 3 } }
        #expect(follower.server.feed.position == head + 3)
    }

    /// An operation's statements run on its connection's event loop, where their answers arrive (no thread is
    /// woken for each), and its value comes back to the caller's actor.
    @Test func anOperationRunsOnItsConnectionsEventLoop() async throws {
        let database = try await TestPostgres.freshDatabase()
        let onLoop = try await database.write { session in
            try await session.execute("SELECT 1")
            return session.connection.eventLoop.inEventLoop
        }
        #expect(onLoop)
        MainActor.assertIsolated()
        let readOnLoop = try await database.read { session in session.connection.eventLoop.inEventLoop }
        #expect(readOnLoop)
    }

    /// A second server on a database, its feed woken by the change listener, and the carts it publishes.
    @MainActor
    final class ListeningFollower {
        let server: Server
        private(set) var carts: [Cart] = []
        private let listening: Task<Void, Never>
        private var subscription: ShopSubscription?

        init(url: PostgresURL) async throws {
            server = Server(try await TestPostgres.open(url: url))
            listening = PostgresChangeListener.start(
                url: url, feed: server.feed, ownEntries: server.database.ownEntries, logger: Logger(label: "test"))
            subscription = server.events.subscribe { [weak self] event in
                if case .cartChanged(let cart, _) = event { self?.carts.append(cart) }
            }
        }

        /// Stops listening and collecting.
        func stop() {
            listening.cancel()
            subscription?.cancel()
        }
    }

    /// Waits until a connection of `url`'s database has run LISTEN (a guard against hanging, not a measure).
    private func waitForListener(on url: PostgresURL) async throws {
        for _ in 0..<600 {
            let rows = try await TestPostgres.execute("""
                SELECT 1 FROM pg_stat_activity WHERE datname = '\(url.database)' AND query LIKE 'LISTEN%'
                """, on: url)
            if !rows.isEmpty { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("no connection listened within 30 s")
    }
}

/// Reads a product from a SQLite database the way its catalog does.
enum LiveCatalogServiceProbe {
    static func product(id: String, in database: ShopDatabase) async throws -> Product? {
        try await database.writer.read { try StoredRows.product($0, id: id) }
    }
}
