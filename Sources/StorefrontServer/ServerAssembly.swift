import JSON
import JSONRPC
import Logging
import Shop
import ViewModelBinding

/// The composition root of `storefront serve`: one connection, the ViewModel host and every ViewModel
/// definition over one set of services.
@MainActor
public struct ServerAssembly {
    /// The JSON-RPC connection the transport feeds.
    public let connection: Connection
    /// The ViewModels on the wire, installed on ``connection``.
    public let host: ViewModelHost

    /// Wires a connection answering through `outbox` to ViewModels over `services`.
    ///
    /// - Parameters:
    ///   - services: the shop's services (live over the store in the server).
    ///   - clock: the clock the ViewModels debounce and time out with.
    ///   - outbox: where the connection writes.
    ///   - logger: the stderr log channel.
    public init(services: ShopServices, clock: any Clock<Duration>, outbox: Outbox, logger: Logger) {
        connection = Connection(
            identity: ServerIdentity(
                name: "storefront", version: StorefrontVersion.current, protocolVersion: StorefrontVersion.protocolVersion),
            outbox: outbox, logger: logger)
        let definitions = ViewModelDefinition.shop(services: services, clock: clock)
        host = ViewModelHost(connection: connection, definitions: definitions, logger: logger)
        host.install()
        let host = self.host
        connection.configureInitialize(
            capabilities: [
                "viewModels": .array(definitions.map { .string($0.type) }.sorted { $0.stringValue! < $1.stringValue! }),
                "stateUpdates": ["patch", "snapshot"],
                "batches": true,
                "cancelRequest": true,
            ],
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
                param("viewModel", ["type": "string"]), param("version", ["type": "integer"]),
                param("patch", ["type": "array"], required: false), param("state", ["type": "object"], required: false),
            ],
            result: nil))
        connection.addDiscoverMembers([
            "components": ["schemas": [
                "ViewModelState": [
                    "type": "object", "required": ["viewModel", "version", "state"],
                    "properties": [
                        "viewModel": ["type": "string"], "version": ["type": "integer", "minimum": 1],
                        "state": ["type": "object", "description": "See protocol/schemas/<Type>State.json."],
                    ],
                ],
                "ActionResult": [
                    "type": "object", "required": ["version"],
                    "properties": ["version": ["type": "integer", "minimum": 1], "superseded": ["type": "boolean"]],
                ],
            ]],
        ])
    }
}
