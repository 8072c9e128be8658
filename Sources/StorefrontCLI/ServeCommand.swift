import ArgumentParser
import Credentials
import CProcessControl
import Dispatch
import Foundation
import JSONRPC
import JSONRPCTransport
import Logging
import PostgresStore
import Shop
import ShopStore
import StorefrontServer

#if canImport(Glibc)
import Glibc
#endif

/// `storefront serve`: the JSON-RPC server on stdin/stdout.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve JSON-RPC 2.0 on stdin/stdout until the client exits or closes stdin.",
        discussion: "stdout carries protocol bytes only; logs go to stderr."
    )

    @Option(help: "Message framing: auto (decide from the first bytes), ndjson (one message per line) or lsp (Content-Length headers).")
    var framing: FramingChoice = .auto

    @Option(help: "Least severe log level written to stderr: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .notice

    @Option(help: "Largest message accepted, in bytes; a larger one is skipped and answered with an error.")
    var maxMessageBytes: Int = 16 * 1024 * 1024

    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp(
        "Inject latency and failures into services, e.g. 'catalog:latency=300ms,failure-rate=0.2;cart:failure-rate=0.5'.",
        discussion: "Services: catalog (products, categories), favorites, cart (the cart's lines), orders (placing and listing orders), recommendations, accounts (registration, sign-in, sessions, profiles), notifications (the inbox's pages and marking read), analytics (the trending section; recording never fails). Off by default."))
    var faults: String?

    @Flag(help: "Record no analytics events (views, cart adds...); the dashboard's trending section still shows what is stored.")
    var noAnalytics = false

    @Option(help: ArgumentHelp(
        "Simulate a market: change prices and stock of the catalog's products RATE times per second (a seeded random walk, stored like real edits, so every server on the database shows it).",
        discussion: "A simulation for demos and load tests, announced in initialize's capabilities.simulation. Off by default.",
        valueName: "RATE"))
    var simulateMarket: Int?

    @Option(help: "The seed of --simulate-market's random walk, from 0 to 9223372036854775807 (default 1).")
    var simulateSeed: UInt64 = 1

    /// The market simulation asked for, if any.
    var marketSimulation: MarketSimulation? {
        simulateMarket.map { MarketSimulation(rate: $0, seed: simulateSeed) }
    }

    func validate() throws {
        guard maxMessageBytes >= 64 else { throw ValidationError("--max-message-bytes must be at least 64") }
        if let simulateMarket, !(1...100_000).contains(simulateMarket) {
            throw ValidationError("--simulate-market must be from 1 to 100000 changes per second")
        }
        // initialize announces the seed as a JSON integer (64-bit signed on the wire).
        guard simulateSeed <= UInt64(Int64.max) else { throw ValidationError("--simulate-seed must be at most \(Int64.max)") }
        if let faults {
            do { _ = try FaultPlan(parsing: faults) } catch { throw ValidationError("--faults: \(error)") }
        }
    }

    func run() throws {
        // From here on, fd 1 is stderr: stray print() calls cannot corrupt the protocol stream.
        let wire = dup(STDOUT_FILENO)
        dup2(STDERR_FILENO, STDOUT_FILENO)
        // A mask inherited from the client's spawning thread must not keep SIGTERM from ending us.
        _ = pc_unblock_all_signals()
        // Exit when the parent dies, even if it left our stdin open.
        _ = pc_signal_when_parent_dies(SIGTERM)

        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "storefront")
        // Cart changes and checkouts are committed on the main thread, at the end of the turn that asked for
        // them (the actions one read of the input brought share the transaction): no thread hand-off per write.
        // A SQLite file's commits do not sync its log: the output waits for a sync (below), which the loop makes
        // whenever it would poll while holding output, one for every commit since the last.
        let database = try store.open(commits: .inline { job in MainQueue.async(job) }, logSyncing: .deferred, logger: logger)
        let plan = try faults.map(FaultPlan.init(parsing:)) ?? .none
        var transportConfiguration = StdioTransport.Configuration()
        transportConfiguration.framing = framing
        transportConfiguration.maxMessageBytes = maxMessageBytes

        let code = MainActor.assumeIsolated {
            // Sleeps (the change feed's poll, debounces, the analytics window) end on the transport's loop
            // while it runs: no timer thread woken per sleep (see `MainLoopClock`).
            let clock = MainLoopClock()
            let live = database.services(faults: plan, clock: clock, market: marketSimulation, taskExecutor: MainQueueTaskExecutor.shared)
            let services = noAnalytics ? live.recordingNoAnalytics() : live
            // Tasks of requests and cart writes resume on the main queue the transport drains, not by way of
            // the global pool (see `MainQueueTaskExecutor`).
            // Nothing the server writes after a commit leaves before the commit is on disk: an answer says
            // success only once its change is stored, and no screen shows a change that a power cut could undo.
            let outbox = Outbox()
            outbox.barrier = database.outputBarrier
            let assembly = ServerAssembly(
                services: services, clock: clock, makeGuestId: { SecureRandom.identifier() }, outbox: outbox, logger: logger,
                simulation: marketSimulation, taskExecutor: MainQueueTaskExecutor.shared)
            // A commit made while exactly one request is in flight (the one it answers, nearly always) starts its log
            // pages for the disk at once: the answer's and the patches' work then overlaps the disk's, and the sync
            // before they leave finds the pages written. Not with none in flight: a background commit (the analytics
            // writer's, a second after an add) would take the one writeback before the next sync, which only comes
            // once there is output to let go, and the next add's commit would start none.
            database.startWritebackAfterCommits(when: { [connection = assembly.connection] in connection.requestsInFlight == 1 })
            logger.info("serving", metadata: database.logMetadata)
            let transport = StdioTransport(
                input: STDIN_FILENO, output: wire, configuration: transportConfiguration, logger: logger)
            let code = transport.run(assembly.connection)
            // Analytics events still buffered are stored before the process ends (a few ms at most).
            Self.flush(services.analytics, timeout: database.flushTimeout, logger: logger)
            // A guest's cart and favourites end with its connection: nothing can reach them any more.
            if let guestId = assembly.session?.guestId {
                do { try database.discardGuest(guestId) } catch {
                    logger.warning("could not delete the guest's cart", metadata: ["error": "\(error)"])
                }
            }
            // What was committed since the last sync (the writes above) is on disk before the process ends.
            database.syncLog()
            return code
        }
        Glibc.exit(code)
    }
}

extension ServeCommand {
    /// Waits (up to the database's busy timeout) for `analytics` to store what it has buffered. The main
    /// thread blocks: the transport has stopped, and the writer runs on the cooperative pool, not on it.
    static func flush(_ analytics: any AnalyticsService, timeout: TimeInterval, logger: Logger) {
        let flushed = DispatchSemaphore(value: 0)
        Task.detached {
            await analytics.flush()
            flushed.signal()
        }
        if flushed.wait(timeout: .now() + timeout) == .timedOut {
            logger.warning("analytics events still buffered at exit were not stored")
        }
    }
}

/// `--database`, shared by the commands that use the store.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "SQLite database file (':memory:' for a private in-memory one), or a PostgreSQL database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]. Default: $XDG_DATA_HOME/storefront/storefront.sqlite, else ~/.local/share/storefront/storefront.sqlite.",
        discussion: "Several servers may share one SQLite file (one machine) or one PostgreSQL database (any number of hosts); each shows what the others store."))
    var database: String?

    func validate() throws {
        if let database, PostgresURL.isPostgres(database) {
            do { _ = try PostgresURL(database) } catch { throw ValidationError("--database: \(error)") }
        }
    }

    /// Opens (creating, migrating and seeding when new) the chosen database.
    /// - Parameters:
    ///   - commits: where a SQLite database's group commit runs.
    ///   - logger: where a PostgreSQL database's pool and listener log.
    ///   - logSyncing: when a SQLite file's log is synced after a commit.
    func open(
        commits: CommitPlacement = .writerQueue, logSyncing: LogSyncing = .atCommit, logger: Logger = Logger(label: "storefront.postgres")
    ) throws -> OpenedStore {
        if let database, PostgresURL.isPostgres(database) {
            let url = try PostgresURL(database)
            return .postgres(try runBlocking { try await PostgresShopDatabase.open(url: url, logger: logger) })
        }
        return .sqlite(try ShopDatabase(path: database ?? ShopDatabase.defaultPath(), commits: commits, logSyncing: logSyncing))
    }
}

extension FramingChoice: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}
