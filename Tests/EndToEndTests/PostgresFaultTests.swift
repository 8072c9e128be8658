import Foundation
import JSON
import Randomness
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Faults of the PostgreSQL backend (issue 17), each on a cluster of the test's own (it restarts, cuts or
/// outlives servers, which must not disturb the suites sharing the test cluster): PostgreSQL restarted
/// under load, a server SIGKILLed with checkouts in flight, and the network to the database cut.
///
/// Every write is a keyed one-unit `cart/add` or `cart/checkout` of one account (``KeyedWriteLedger``), so
/// the stored keys say which writes took effect whatever their answers were. Nothing asserts a duration:
/// waits are bounded by guards (90 s and more) that only catch a hang; the figures are printed.
@MainActor
@Suite(
    .serialized,
    .enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage),
    .enabled(if: TestDatabase.hasPostgres, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL (scripts/test.sh installs and starts it); these tests start clusters of their own with scripts/postgres.sh"))
struct PostgresFaultTests {
    /// How long a write may go unanswered before the test fails: a guard against a hang, far beyond the
    /// server's 5 s deadline per database operation.
    static let guardMilliseconds: Int64 = 90_000

    // MARK: 1. PostgreSQL restarted under load

    /// Two servers on one database, signed in to one account, take keyed one-unit adds continuously (each
    /// server 4 in flight, a new one as soon as one is answered) and now and then a checkout (the load
    /// pauses while it runs: a checkout of a cart the other server is changing is refused as
    /// `cartChanged`, rightly), while the cluster is restarted (`scripts/postgres.sh restart`: a fast
    /// shutdown closes every connection, then the server starts again on the same port). Every write is
    /// answered within the guard, with success, a refusal or a retryable `storageFailed` failure; both
    /// servers serve again afterwards (each applies adds, and a checkout places an order), each shows a
    /// change the other makes while it is idle (its `LISTEN` connection is back), and every write answered
    /// with success is in the database. Three restarts by default (`STOREFRONT_PG_RESTARTS`);
    /// `STOREFRONT_SEED` seeds the load.
    @Test func restartingPostgreSQLUnderLoadFailsWritesRetryablyThenRecoversAndLosesNothing() throws {
        let seed = UInt64(environmentInteger("STOREFRONT_SEED", default: 20_261_217))
        var random = SeededRandom(seed: seed)
        let cluster = try ThrowawayCluster()
        let url = cluster.url
        var account: SignedInAccount?
        let sides = try ["A", "B"].map { try Side($0, database: url, account: &account, carts: 4) }
        let owner = try #require(account).owner
        let start = try StoredShop.read(path: url, owner: owner)
        let pool = Self.pool(start)
        try #require(pool.count >= 8, "the demo catalog has products with stock")
        let load = KeyedLoad(sides, ledger: KeyedWriteLedger(prefix: "restart"), guardMilliseconds: Self.guardMilliseconds)

        // The load: adds on every idle cart ViewModel of both servers for 0.2-0.8 s; then, once nothing is
        // in flight, 1-2 adds and a checkout on one server; again.
        enum Mode {
            case adds(until: Int64)
            case checkout(Side)
            case checkingOut
        }
        var mode = Mode.adds(until: monotonicMilliseconds() + 500)
        func step() throws {
            let now = monotonicMilliseconds()
            switch mode {
            case .adds(let until) where now < until:
                for side in sides {
                    try load.send(side, load.idleCarts(of: side).map { (.add(productId: pool.randomElement(using: &random)!), $0) })
                }
            case .adds:
                mode = .checkout(sides.randomElement(using: &random)!)
            case .checkout(let side) where load.isIdle:
                let adds = (0..<Int.random(in: 1...2, using: &random)).map { _ in KeyedWriteLedger.Kind.add(productId: pool.randomElement(using: &random)!) }
                try load.send(side, adds + [.checkout])
                mode = .checkingOut
            case .checkingOut where load.isIdle:
                mode = .adds(until: now + Int64.random(in: 200...800, using: &random))
            case .checkout, .checkingOut:
                break
            }
            try load.pump()
        }
        func orders(sentAfter time: Int64) -> Int {
            load.answered.count { $0.sent >= time && $0.answer != .applied(orderId: nil) && $0.answer.isApplied }
        }

        // Each round: load until 40 more writes are answered (and, the first time, an order placed), then the
        // restart while the load goes on, then load until both servers have recovered.
        let restarts = environmentInteger("STOREFRONT_PG_RESTARTS", default: 3)
        var figures: [String] = []
        for round in 1...restarts {
            let roundStarted = monotonicMilliseconds()
            let answeredBefore = load.answered.count
            while load.answered.count < answeredBefore + 40 || orders(sentAfter: 0) < 1 {
                try #require(monotonicMilliseconds() - roundStarted < Self.guardMilliseconds, "restart \(round), before: \(load.ledger.summary)")
                try step()
            }
            let restartStarted = monotonicMilliseconds()
            let inFlightAtRestart = load.ledger.keys.count - load.answered.count
            let restart = try cluster.startRestart()
            while restart.isRunning { try step() }
            try restart.finish()
            let restartEnded = monotonicMilliseconds()

            // The load goes on until each server has applied 10 adds sent after the restart and a checkout
            // sent after it placed an order: a server that does not recover fails here, after the guard.
            func recovered() -> Bool {
                orders(sentAfter: restartEnded) >= 1 && sides.allSatisfy { side in
                    load.answered.count { $0.side == side.name && $0.sent >= restartEnded && $0.answer == .applied(orderId: nil) } >= 10
                }
            }
            while !recovered() {
                guard monotonicMilliseconds() - restartEnded < 2 * Self.guardMilliseconds else {
                    Issue.record("""
                        the servers did not recover within \(2 * Self.guardMilliseconds) ms of restart \(round): \(load.ledger.summary); \
                        last answers: \(load.answered.suffix(8)); the cluster's log:\n\(cluster.logTail())
                        """)
                    return
                }
                try step()
            }
            try load.drain()

            // Each server, idle, shows a change the other makes: its feed is woken by LISTEN again.
            try Self.expectShown(by: sides[1], changeBy: sides[0], product: pool[0], database: url, owner: owner, load: load)
            try Self.expectShown(by: sides[0], changeBy: sides[1], product: pool[1], database: url, owner: owner, load: load)
            let listening = try Self.waitForListeners(2, database: url)
            #expect(listening == 2, "both servers LISTEN again after restart \(round) (pg_stat_activity shows \(listening))")
            let problems = load.ledger.problems(in: try StoredShop.read(path: url, owner: owner), initialStock: start.stock)
            try #require(problems.isEmpty, "after restart \(round) (seed \(seed)):\n\(problems.joined(separator: "\n"))")

            let answered = load.answered[answeredBefore...]
            let touched = answered.filter { $0.answered >= restartStarted && $0.sent < restartEnded }
            let failures = answered.filter { $0.answer.isFailure }
            let firstApplied = sides.map { side in
                answered.first { $0.side == side.name && $0.sent >= restartEnded && $0.answer.isApplied }.map { "\(side.name) +\($0.answered - restartEnded) ms" } ?? "\(side.name) none"
            }
            let slow = answered.filter { $0.milliseconds >= 4_000 }
            figures.append("""
                restart \(round) took \(restartEnded - restartStarted) ms; \(inFlightAtRestart) writes in flight at its start, \(touched.count) \
                during it (\(touched.count { $0.answer.isApplied }) applied, \(touched.count { $0.answer.isFailure }) failed); \
                \(slow.count) answers took 4 s or more (\(slow.count { $0.answer.isApplied }) of them successes); failures \
                answered \(failures.map(\.milliseconds).min() ?? 0)-\(failures.map(\.milliseconds).max() ?? 0) ms after they were sent, \
                the last \(failures.map { $0.answered - restartEnded }.max() ?? 0) ms after the restart ended, as \(Self.histogram(failures)); \
                first success after it: \(firstApplied.joined(separator: ", "))
                """)
        }

        let stored = try StoredShop.read(path: url, owner: owner)
        let problems = load.ledger.problems(in: stored, initialStock: start.stock)
        #expect(problems.isEmpty, "at the end (seed \(seed)):\n\(problems.joined(separator: "\n"))")
        for side in sides { #expect(try side.exit() == 0, "\(side.name) exits normally") }
        print("""
            postgres restart under load (seed \(seed)): \(restarts) restarts, \(load.ledger.summary); longest answer \
            \(load.answered.map(\.milliseconds).max() ?? 0) ms; \(stored.orders.count) orders, nothing acknowledged lost
            \(figures.map { "  " + $0 }.joined(separator: "\n"))
            """)
    }

    // MARK: 2. A server SIGKILLed mid checkout

    /// A server takes pipelined keyed adds and checkouts (several checkouts per batch) and is SIGKILLed
    /// after a seeded-random number of their answers, with checkouts in flight. After each kill the
    /// database is consistent (orders have lines and amounts that add up, stock is the initial stock less
    /// the ordered units, every order is the outcome of a stored checkout key, every unit added is in an
    /// order or the cart, every acknowledged write is stored), and the next server on it shows the stored
    /// cart and the newest orders. `STOREFRONT_PG_KILLS` sets the number of kills (default 8).
    @Test func aServerKilledWithCheckoutsInFlightLeavesTheDatabaseConsistent() throws {
        let kills = environmentInteger("STOREFRONT_PG_KILLS", default: 8)
        let seed = UInt64(environmentInteger("STOREFRONT_SEED", default: 20_261_218))
        var random = SeededRandom(seed: seed)
        let cluster = try ThrowawayCluster()
        let url = cluster.url
        var ledger = KeyedWriteLedger(prefix: "kill")
        var account: SignedInAccount?
        var initialStock: [String: Int] = [:]
        var pool: [String] = []
        var tally = (checkoutsInFlight: 0, checkoutsInFlightApplied: 0, addsInFlight: 0, addsInFlightApplied: 0)

        for life in 0...kills {
            let side = try Side("life \(life)", database: url, account: &account, carts: 1)
            let owner = try #require(account).owner
            let dashboard = try side.client.open("dashboard")
            try side.client.waitUntil(dashboard) { $0["recentOrders"]?["phase"] == "loaded" }
            let stored = try StoredShop.read(path: url, owner: owner)
            if life == 0 {
                initialStock = stored.stock
                pool = Self.pool(stored)
                try #require(pool.count >= 8, "the demo catalog has products with stock")
            } else {
                // The new server shows what the killed one left.
                #expect(side.shownLines(side.checkoutCart) == stored.cartLines, "life \(life): the cart shown is the stored one (seed \(seed))")
                let newest = try Psql.run(url: url, sql: "SELECT id FROM customer_order WHERE owner = '\(owner)' ORDER BY seq DESC LIMIT 3").map { JSONValue.string($0[0]) }
                let shown = side.client.mirrors[dashboard]?.state["recentOrders"]?["items"]?.arrayValue?.compactMap { $0["id"] }
                #expect(shown == newest, "life \(life): the dashboard shows the newest stored orders (seed \(seed))")
            }
            if life == kills {
                side.server.closeInput()
                #expect(try side.server.waitForExit() == 0)
                break
            }

            // 2-4 groups of 1-3 adds and a checkout, pipelined in one write on one cart ViewModel (the
            // database is up: no write may fail, so one ViewModel's `error` is enough to tell).
            var keys: [String] = []
            for _ in 0..<Int.random(in: 2...4, using: &random) {
                for _ in 0..<Int.random(in: 1...3, using: &random) { keys.append(ledger.key(for: .add(productId: pool.randomElement(using: &random)!))) }
                keys.append(ledger.key(for: .checkout))
            }
            let ids = try side.client.send(keys.map { ledger.call($0, on: side.checkoutCart) })
            // The kill comes after a seeded-random number of the answers (fewer than all), and whatever else
            // arrives within 0-50 ms: with the later writes in flight, some of them committing. The first
            // kill comes at once, before anything is read (so some checkouts are surely unanswered at a kill).
            let answersBeforeKill = life == 0 ? 0 : Int.random(in: 0..<keys.count, using: &random)
            let grace: Int32? = life == 0 ? nil : Int32.random(in: 0...50, using: &random)
            func takeAnswers() throws {
                for (key, id) in zip(keys, ids) where ledger.answers[key] == nil {
                    guard let response = side.client.takeResponse(id) else { continue }
                    let answer = try ledger.answer(to: response, for: key, shown: side.client.mirrors[side.checkoutCart]?.state).get()
                    #expect(!answer.isFailure, "\(key): the database is up, yet \(answer)")
                    ledger.record(answer, for: key)
                }
            }
            while keys.count { ledger.answers[$0] != nil } < answersBeforeKill {
                try side.client.receiveOne()
                try takeAnswers()
            }
            if let grace {
                for message in try side.server.receiveAvailable(framing: .ndjson, waitingMilliseconds: grace) { try side.client.handle(message) }
                try takeAnswers()
            }
            #expect(try side.server.killAndWait() == 128 + SIGKILL)
            // The database ends the killed server's sessions (rolling back what they had not committed)
            // when it notices their sockets closed: the check waits for that, so that it sees the end state.
            try Self.waitUntilNoSessions(database: url)

            let afterKill = try StoredShop.read(path: url, owner: owner)
            let problems = ledger.problems(in: afterKill, initialStock: initialStock)
            try #require(problems.isEmpty, "after kill \(life + 1) (seed \(seed)):\n\(problems.joined(separator: "\n"))")
            for key in keys where ledger.answers[key] == nil {
                let applied = afterKill.idempotencyKeys[key] != nil
                if ledger.kinds[key] == .checkout {
                    tally.checkoutsInFlight += 1
                    if applied { tally.checkoutsInFlightApplied += 1 }
                } else {
                    tally.addsInFlight += 1
                    if applied { tally.addsInFlightApplied += 1 }
                }
            }
        }
        let stored = try StoredShop.read(path: url, owner: try #require(account).owner)
        print("""
            postgres kill mid checkout (seed \(seed)): \(kills) kills; \(ledger.summary); in flight at a kill: \
            \(tally.checkoutsInFlight) checkouts (\(tally.checkoutsInFlightApplied) applied whole, the rest not at all), \
            \(tally.addsInFlight) adds (\(tally.addsInFlightApplied) applied); \(stored.orders.count) orders, consistent after every kill
            """)
        #expect(tally.checkoutsInFlight > 0, "checkouts were unanswered at a kill")
    }

    // MARK: 3. The network to the database cut

    /// A server reaches the cluster through a TCP proxy; a second one directly. The proxy is frozen
    /// (SIGSTOP: connections stay open, nothing flows, as with a cut cable): a keyed add to the first server
    /// is answered, within the guard, with a retryable `storageFailed` failure (its 5 s deadline); a
    /// `cart/refresh` then answers normally and shows its load failed, retryably, in the state; an add and
    /// a checkout pipelined after it fail like the first (these need other pooled connections: the first
    /// add's query still holds its own, new ones through the cut included); the second server goes on
    /// serving meanwhile. Once the proxy runs again (SIGCONT) the first server serves again (adds
    /// and a checkout succeed), each server shows a change the other makes, and every write answered with
    /// success is in the database.
    @Test func aCutNetworkToTheDatabaseFailsRequestsRetryablyAfterABoundedWaitThenRecovers() throws {
        let cluster = try ThrowawayCluster()
        let proxy = try FreezableProxy(to: cluster.port)
        var account: SignedInAccount?
        let cut = try Side("behind the proxy", database: cluster.url(port: proxy.port), account: &account, carts: 3)
        let direct = try Side("direct", database: cluster.url, account: &account, carts: 1)
        let owner = try #require(account).owner
        let start = try StoredShop.read(path: cluster.url, owner: owner)
        let pool = Self.pool(start)
        try #require(pool.count >= 8, "the demo catalog has products with stock")
        let load = KeyedLoad([cut, direct], ledger: KeyedWriteLedger(prefix: "cut"), guardMilliseconds: Self.guardMilliseconds)
        let addsAndCheckout: [KeyedWriteLedger.Kind] = pool.prefix(2).map { .add(productId: $0) } + [.checkout]

        let warmUp = try load.exchange(cut, addsAndCheckout)
        try #require(warmUp.allSatisfy { $0.answer.isApplied }, "before the cut: \(warmUp)")

        proxy.freeze()
        var duringCut = try load.exchange(cut, [.add(productId: pool[0])])
        // The first add's query still holds its pooled connection (nothing cancels it): what follows needs
        // other connections, new ones through the cut included. A reload of the cart, then an add and a
        // checkout pipelined (each keyed write looks its key up before the next action starts).
        let refreshSent = monotonicMilliseconds()
        let refreshAnswer = try cut.client.call("cart/refresh", ["viewModel": .string(cut.carts[2])])
        let refreshWait = monotonicMilliseconds() - refreshSent
        let refreshed = cut.client.mirrors[cut.carts[2]]?.state
        duringCut += try load.exchange(cut, [.add(productId: pool[1]), .checkout])
        // The server not behind the cut goes on serving meanwhile.
        let unaffected = try load.exchange(direct, [.add(productId: pool[3])])
        proxy.thaw()
        for write in duringCut {
            #expect(write.answer.isFailure, "\(write.key), sent while the network was cut, is answered with a retryable failure: \(write)")
        }
        #expect(refreshAnswer["result"] != nil, "cart/refresh answers normally: \(refreshAnswer)")
        #expect(refreshed?["phase"] == "failed" && refreshed?["error"]?["retryable"] == true,
                "the refreshed cart shows its load failed, retryably: \(String(describing: refreshed))")
        #expect(unaffected.allSatisfy { $0.answer.isApplied }, "the server not behind the cut serves: \(unaffected)")

        // Once the proxy runs again, a write succeeds (tried every 250 ms, as a client would), then
        // pipelined adds and a checkout all do.
        let thawed = monotonicMilliseconds()
        var firstSuccess: Int64?
        var attempts = 0
        while firstSuccess == nil {
            guard monotonicMilliseconds() - thawed < 2 * Self.guardMilliseconds else {
                Issue.record("no write succeeded within \(2 * Self.guardMilliseconds) ms after the network came back: \(load.answered.suffix(5)); stderr: \(cut.server.errorText.suffix(2_000))")
                return
            }
            attempts += 1
            let answer = try load.exchange(cut, [.add(productId: pool[4])])[0]
            if answer.answer.isApplied { firstSuccess = answer.answered } else { poll(nil, 0, 250) }
        }
        let after = try load.exchange(cut, addsAndCheckout)
        #expect(after.allSatisfy { $0.answer.isApplied }, "after the network came back, adds and a checkout succeed: \(after)")

        try Self.expectShown(by: cut, changeBy: direct, product: pool[5], database: cluster.url, owner: owner, load: load)
        try Self.expectShown(by: direct, changeBy: cut, product: pool[6], database: cluster.url, owner: owner, load: load)
        let stored = try StoredShop.read(path: cluster.url, owner: owner)
        let problems = load.ledger.problems(in: stored, initialStock: start.stock)
        #expect(problems.isEmpty, "after the cut:\n\(problems.joined(separator: "\n"))")
        for side in [cut, direct] { #expect(try side.exit() == 0, "\(side.name) exits normally") }
        print("""
            postgres network cut: keyed writes sent while it was cut answered after \(duringCut.map { "\($0.milliseconds) ms" }.joined(separator: ", ")) \
            as \(Self.histogram(duringCut)); cart/refresh answered after \(refreshWait) ms, showing \
            \(refreshed?["error"]?["message"]?.stringValue ?? "?"); the direct server's write: \(unaffected.map { "\($0.answer) in \($0.milliseconds) ms" }.joined()); \
            first success \(firstSuccess! - thawed) ms after the proxy ran again (\(attempts) tries); in all \(load.ledger.summary); nothing acknowledged lost
            """)
    }

    // MARK: Steps

    /// Products that can take many units: stock of 100 or more, at least 10 per order.
    static func pool(_ stored: StoredShop) -> [String] {
        Array(stored.stock.keys.sorted().filter { stored.stock[$0]! >= 100 && stored.maxPerOrder[$0]! >= 10 }.prefix(12))
    }

    /// `writer` adds a unit of `product`; `watcher`, idle, must come to show the cart the database then holds
    /// on its first cart ViewModel (its feed woken by a notification on its `LISTEN` connection: the
    /// PostgreSQL feed has no other way to learn of another server's commit).
    static func expectShown(
        by watcher: Side, changeBy writer: Side, product: String, database url: String, owner: String, load: KeyedLoad
    ) throws {
        let write = try load.exchange(writer, [.add(productId: product)])[0]
        guard write.answer.isApplied else {
            Issue.record("\(writer.name)'s add for \(watcher.name) to see failed: \(write)")
            return
        }
        let stored = try StoredShop.read(path: url, owner: owner).cartLines
        let started = monotonicMilliseconds()
        while watcher.shownLines(watcher.carts[0]) != stored {
            guard monotonicMilliseconds() - started < guardMilliseconds else {
                Issue.record("""
                    \(watcher.name) did not show \(writer.name)'s change within \(guardMilliseconds) ms (is its LISTEN connection back?): \
                    it shows \(String(describing: watcher.client.mirrors[watcher.carts[0]]?.state)), the database holds \(stored); \
                    stderr: \(watcher.server.errorText.suffix(1_500))
                    """)
                return
            }
            for message in try watcher.server.receiveAvailable(framing: .ndjson, waitingMilliseconds: 100) { try watcher.client.handle(message) }
        }
    }

    /// Waits (up to the guard) until `count` sessions of the database have `LISTEN` as their last statement,
    /// and returns how many there are then.
    static func waitForListeners(_ count: Int, database url: String) throws -> Int {
        let started = monotonicMilliseconds()
        while true {
            let listening = Int(try Psql.run(url: url, sql: "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN %'")[0][0]) ?? -1
            if listening == count || monotonicMilliseconds() - started > guardMilliseconds { return listening }
            poll(nil, 0, 100)
        }
    }

    /// Waits (up to the guard) until no session but this check's own is connected to the database.
    static func waitUntilNoSessions(database url: String) throws {
        let started = monotonicMilliseconds()
        while true {
            let sessions = try Psql.run(url: url, sql: "SELECT pid, state, query FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
            if sessions.isEmpty { return }
            guard monotonicMilliseconds() - started < guardMilliseconds else {
                throw ServerProcessError(description: "the killed server's sessions are still there after \(guardMilliseconds) ms: \(sessions)")
            }
            poll(nil, 0, 20)
        }
    }

    /// How many failures showed each way (messages cut at their first parenthesis).
    static func histogram(_ writes: [Answered]) -> String {
        var counts: [String: Int] = [:]
        for write in writes {
            guard case .failed(let shown) = write.answer else { continue }
            counts[String(shown.prefix { $0 != "(" }).trimmingCharacters(in: .whitespaces), default: 0] += 1
        }
        return counts.isEmpty ? "none" : counts.sorted { $0.value > $1.value }.map { "\($0.value)× \($0.key)" }.joined(separator: "; ")
    }
}
