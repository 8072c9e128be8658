import Foundation
@testable import PostgresStore
import Shop
@testable import ShopStore
import Testing

/// The PostgreSQL cart and checkout, which derive the cart they answer from the one they read (not read back
/// after the write) and store a change in one statement: what they answer, store and log is what a read
/// afterwards finds, and what the SQLite store answers to the same calls.
@MainActor
@Suite(.enabled(if: TestPostgres.isAvailable, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster to test against (scripts/test.sh starts one)"))
struct PostgresCartTests {
    /// A call on a store's cart or orders, and its answer as either store gives it.
    enum Call: CustomStringConvertible {
        case add(String, Int), set(String, Int), remove(String), clear, checkout

        var description: String {
            switch self {
            case .add(let id, let quantity): "add \(id) \(quantity)"
            case .set(let id, let quantity): "set \(id) \(quantity)"
            case .remove(let id): "remove \(id)"
            case .clear: "clear"
            case .checkout: "checkout"
            }
        }

        /// The cart after the call (for a checkout: its order's lines, as a cart at revision 0), or its error.
        func run(on services: CatalogTwins.Services, for shopper: Shopper) async -> Result<Cart, ShopError> {
            do {
                switch self {
                case .add(let id, let quantity): return .success(try await services.cart.add(productId: id, quantity: quantity, for: shopper))
                case .set(let id, let quantity): return .success(try await services.cart.setQuantity(productId: id, quantity: quantity, for: shopper))
                case .remove(let id): return .success(try await services.cart.remove(productId: id, for: shopper))
                case .clear: return .success(try await services.cart.clear(for: shopper))
                case .checkout:
                    let order = try await services.orders.placeOrder(expectedRevision: nil, for: shopper)
                    let lines = order.lines.map { CartLine(productId: $0.productId, name: $0.name, categoryId: "", unitPrice: $0.unitPrice, quantity: $0.quantity) }
                    return .success(Cart(lines: lines, tax: order.tax, revision: 0))
                }
            } catch let error as ShopError {
                return .failure(error)
            } catch {
                return .failure(ShopError(reason: "unexpected", message: "\(error)"))
            }
        }
    }

    /// 200 calls drawn from a fixed seed over five products (one with little stock, one unknown), some of them
    /// refused (not in the cart, beyond stock or the per-order maximum, an empty cart): each answered alike by
    /// both stores, PostgreSQL's answer the cart a read then finds, and both logs alike.
    @Test func everyChangeAnswersTheCartAReadFindsAndWhatSQLiteAnswers() async throws {
        let twins = try await CatalogTwins.make()
        try await twins.addAccount()
        let shopper = Shopper.account(1)
        var ids = try await twins.inStock(4)
        // A product with 2 in stock, in both stores: adds past it are refused, and checkouts empty it.
        try await twins.onBothCatalogs { catalog in _ = try await catalog.update(id: ids[3], ProductUpdate(stock: 2)) }
        ids.append("p-9999")
        var state: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var refused = 0
        for step in 0..<200 {
            let id = ids[next(ids.count)]
            let call: Call = switch next(20) {
            case 0..<9: .add(id, 1 + next(3))
            case 9..<13: .set(id, next(4))
            case 13..<16: .remove(id)
            case 16: .clear
            default: .checkout
            }
            let postgres = await call.run(on: twins.postgresServices, for: shopper)
            let sqlite = await call.run(on: twins.sqliteServices, for: shopper)
            #expect(postgres == sqlite, "step \(step): \(call)")
            if case .failure = postgres { refused += 1 }
            let read = try await twins.postgres.cart.cart(of: shopper)
            if case .success(let answered) = postgres, case .checkout = call {
                #expect(read.isEmpty, "step \(step): \(call)")
                _ = answered
            } else if case .success(let answered) = postgres {
                #expect(answered == read, "step \(step): \(call)")
            }
            // What every open cart shows is the cart as stored, its revision too (a checkout's emptied cart included).
            let shown = twins.postgres.published.events.last { if case .cartChanged = $0 { true } else { false } }
            if case .cartChanged(let cart, _) = shown { #expect(cart == read, "step \(step): \(call)") }
        }
        // Both kinds of answer were seen.
        #expect(refused > 10 && refused < 150)
        #expect(try await twins.postgres.logEntries() == (try await twins.sqliteLogEntries()))
        let stock = try await twins.postgres.catalog.product(id: ids[3]).stock
        #expect(stock == (try await twins.sqlite.catalog.product(id: ids[3]).stock))
        // The orders, read with their lines in one statement (their numbers apart: a refused checkout
        // leaves a gap on PostgreSQL).
        func placed(_ orders: [Order]) -> [String] { orders.map { "\($0.lines) \($0.subtotal) \($0.tax) \($0.total)" } }
        let orders = try await twins.postgres.orders.recentOrders(limit: 100, of: shopper)
        #expect(orders.count > 2)
        #expect(placed(orders) == placed(try await twins.sqlite.orders.recentOrders(limit: 100, of: shopper)))
        for order in orders {
            #expect(try await twins.postgres.database.read { try await PostgresRows.order($0, id: order.id) }?.order == order)
        }
    }

    /// Another server's changes are read in one statement when none needs data (a cart no session here shows,
    /// a favourite), and in a snapshot when one does (the cart of the shopper shown here, an order); the carts
    /// of shoppers not shown here are not read.
    @Test func aFollowerReadsOnlyWhatItsSessionsShow() async throws {
        let writer = CatalogServer(try await TestPostgres.freshDatabase())
        let shown = ShownShoppers()
        shown.show(.guest("here"))
        let followerDatabase = try await TestPostgres.open(url: writer.database.url)
        let events = ShopEvents(shownShoppers: shown)
        let follower = ChangeFeed(source: PostgresChangeLogSource(database: followerDatabase), position: writer.database.lastSeqAtOpen, events: events)
        let recorder = PostgresEventRecorder(events)

        _ = try await writer.cart.add(productId: "p-0001", quantity: 1, for: .account(1))
        try await writer.favorites.setFavorite(productId: "p-0002", isFavorite: true, for: .account(1))
        await follower.catchUp()
        #expect(recorder.events == [.favoriteChanged(productId: "p-0002", isFavorite: true, shopper: .account(1))])

        let mine = try await writer.cart.add(productId: "p-0003", quantity: 1, for: .guest("here"))
        let order = try await writer.orders.placeOrder(expectedRevision: nil, for: .account(1))
        await follower.catchUp()
        #expect(Array(recorder.events.dropFirst()) == [.cartChanged(mine, shopper: .guest("here")), .orderPlaced(order, shopper: .account(1))])
        #expect(follower.position == (try await writer.database.read { try await PostgresChangeLog.lastSeq($0) }))
        _ = follower
    }

    /// A checkout appends its entries (the cart's, the order's) in one statement: the log is pruned when any
    /// of them is numbered at a multiple of `ChangeLog.pruneEvery`, the first or the last.
    @Test(arguments: [0, 1]) func entriesAppendedTogetherPruneWhenAnyOfThemIsDue(multipleAt index: Int) async throws {
        let server = CatalogServer(try await TestPostgres.freshDatabase())
        let shopper = Shopper.account(1)
        _ = try await server.cart.add(productId: "p-0001", quantity: 1, for: shopper)
        // An entry past its retention, and the head placed so that the checkout's two entries have the multiple
        // at `index`.
        let multiple = ChangeLog.pruneEvery * 3
        _ = try await server.database.write { session in
            try await session.execute("UPDATE change_log SET at = 0 WHERE seq = (SELECT MIN(seq) FROM change_log)")
            try await session.execute("UPDATE change_log_head SET seq = \(multiple - 1 - Int64(index))")
        }
        let stale = try await server.database.read { try await PostgresChangeLog.log($0, after: 0, limit: 0).firstKept }
        _ = try await server.orders.placeOrder(expectedRevision: nil, for: shopper)
        let logged = try await server.database.read { session in
            try await session.rows("SELECT kind, seq FROM change_log WHERE seq >= \(multiple - 1) ORDER BY seq").map { try $0.decode((String, Int64).self) }
        }
        #expect(logged.map(\.1) == [multiple - Int64(index), multiple - Int64(index) + 1])
        #expect(logged.map(\.0) == ["cart", "order"])
        #expect(try await server.database.read { try await PostgresChangeLog.log($0, after: 0, limit: 0).firstKept } != stale)
    }
}

extension CatalogTwins {
    /// PostgreSQL's cart, orders and favourites.
    var postgresServices: Services { Services(favorites: postgres.favorites, cart: postgres.cart, orders: postgres.orders) }
    /// SQLite's cart, orders and favourites.
    var sqliteServices: Services { Services(favorites: sqlite.favorites, cart: sqlite.cart, orders: sqlite.orders) }

    /// Runs `body` with each store's catalog: PostgreSQL's first.
    func onBothCatalogs(_ body: (any CatalogService) async throws -> Void) async throws {
        try await body(postgres.catalog)
        try await body(sqlite.catalog)
    }
}
