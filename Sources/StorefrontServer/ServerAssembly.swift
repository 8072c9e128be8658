import JSON
import JSONRPC
import Logging
import Shop
import ShopFeatures
import ViewModelBinding

/// The composition root of `storefront serve`: one connection, the ViewModel host and every ViewModel
/// definition over one set of services.
@MainActor
public struct ServerAssembly {
    /// The JSON-RPC connection the transport feeds.
    public let connection: Connection
    /// The ViewModels on the wire, installed on ``connection``.
    public let host: ViewModelHost<ShopEnvironment>
    /// The connection's session (nil for the assembly that only derives the protocol documents).
    public let session: ShopSession?

    /// Wires a connection answering through `outbox` to ViewModels over `services`, in a session of its own
    /// (a guest until it signs in).
    ///
    /// - Parameters:
    ///   - services: the shop's services (live over the store in the server).
    ///   - clock: the clock the ViewModels debounce and time out with, and the session's expiry is timed on.
    ///   - makeGuestId: a new unguessable guest id (the session's guest cart is stored under it).
    ///   - outbox: where the connection writes.
    ///   - logger: the stderr log channel.
    ///   - simulation: the market simulation the services run, announced in `initialize`'s capabilities
    ///     (nil: none).
    ///   - taskExecutor: the executor the requests' tasks and the cart writes' tasks prefer (the stdio
    ///     transport's `MainQueueTaskExecutor` in the server; nil: none).
    public init(
        services: ShopServices, clock: any Clock<Duration>, makeGuestId: @escaping @Sendable () -> String,
        outbox: Outbox, logger: Logger, simulation: MarketSimulation? = nil, taskExecutor: (any TaskExecutor)? = nil
    ) {
        let session = ShopSession(
            accounts: services.accounts, events: services.events, clock: clock, makeGuestId: makeGuestId, taskExecutor: taskExecutor)
        self.init(
            environment: ShopEnvironment(services: services, session: session, clock: clock), outbox: outbox, logger: logger,
            simulation: simulation)
        connection.taskExecutor = taskExecutor
    }

    /// The protocol as `rpc.discover` serves it, and the state schemas, derived from the code: no services
    /// and no database are involved.
    ///
    /// - Returns: the OpenRPC document, and each ViewModel state's JSON Schema document by state name.
    public static func protocolDocuments() -> (openRPC: JSONValue, stateSchemas: [String: JSONValue]) {
        let assembly = ServerAssembly(environment: nil, outbox: Outbox(), logger: Logger(label: "storefront"))
        return (assembly.connection.openRPCDocument(), contractOrFail { try ProtocolContract.shop.stateSchemaDocuments(idPrefix: schemaIDPrefix) })
    }

    /// Where the state schemas' `$id`s point.
    public static let schemaIDPrefix = "https://storefront.example/protocol/schemas/"

    private init(environment: ShopEnvironment?, outbox: Outbox, logger: Logger, simulation: MarketSimulation? = nil) {
        session = environment?.session
        connection = Connection(
            identity: ServerIdentity(
                name: "storefront", version: StorefrontVersion.current, protocolVersion: StorefrontVersion.protocolVersion),
            outbox: outbox, logger: logger)
        let contract = ProtocolContract.shop
        host = ViewModelHost(connection: connection, contract: contract, environment: environment, logger: logger)
        let host = self.host
        if let services = environment?.services, let session = environment?.session {
            host.settle = { await services.events.settled() }
            host.idempotencyRecord = { key in try await services.idempotency.record(of: key) }
            host.publishStoredChanges = { await services.idempotency.publishStoredChanges() }
            host.idempotencyScope = { session.shopper.storageKey }
        }
        Self.contractOrFail { try host.install() }
        var capabilities: [String: JSONValue] = [
            "viewModels": .array(contract.definitions.map { .string($0.type) }),
            "stateUpdates": ["patch", "snapshot"],
            "batches": true,
            "cancelRequest": true,
        ]
        if let simulation {
            // Only when asked for: clients and people can tell simulated prices from real ones.
            capabilities["simulation"] = ["market": ["rate": .integer(Int64(simulation.rate)), "seed": .integer(Int64(bitPattern: simulation.seed))]]
        }
        connection.configureInitialize(
            capabilities: .object(capabilities),
            hook: { [weak host] params in
                guard let requested = params.capabilities?["stateUpdates"] else { return }
                guard let mode = requested.stringValue.flatMap(StateUpdateMode.init(rawValue:)) else {
                    throw RPCError.invalidParams(
                        parameter: "capabilities.stateUpdates", reason: "must be \"patch\" or \"snapshot\"")
                }
                host?.updateMode = mode
            })
        connection.describeNotification(MethodDescription(
            name: "viewModel/changed",
            summary: "Server to client: a ViewModel's state changed; patch (RFC 6902) from version-1 to version, or the whole state in snapshot mode.",
            params: [
                param("viewModel", ["type": "string"]), param("version", ["type": "integer", "minimum": 2]),
                param("patch", ["type": "array"], required: false),
                param("state", ["$ref": "#/components/schemas/ViewModelState/properties/state"], required: false),
            ],
            result: nil))
    }

    /// Runs a derivation of the contract from the types; a failure is a programming error that every test
    /// run meets, so it stops the process with what is wrong.
    private static func contractOrFail<T>(_ derive: () throws -> T) -> T {
        do { return try derive() } catch { fatalError("the protocol contract cannot be derived from the types: \(error)") }
    }
}
