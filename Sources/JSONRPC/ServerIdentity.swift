import JSON

/// What the server says about itself in the `initialize` result and in `rpc.discover`.
public struct ServerIdentity: Sendable {
    /// `serverInfo.name`.
    public var name: String
    /// `serverInfo.version`.
    public var version: String
    /// The protocol version the server speaks (`protocolVersion` of the `initialize` result).
    public var protocolVersion: String

    /// An identity from its parts.
    public init(name: String, version: String, protocolVersion: String) {
        self.name = name
        self.version = version
        self.protocolVersion = protocolVersion
    }
}

/// The params of `initialize`; every member is optional, and unknown members (LSP's `processId`,
/// `rootUri`, ...) are ignored.
public struct InitializeParams: Decodable, Sendable {
    /// The protocol version the client wants.
    public var protocolVersion: String?
    /// Who the client is.
    public var clientInfo: ClientInfo?
    /// What the client can do; read by the application (e.g. `stateUpdates`).
    public var capabilities: JSONValue?

    /// `clientInfo`.
    public struct ClientInfo: Decodable, Sendable {
        /// The client's name.
        public var name: String
        /// The client's version.
        public var version: String?
    }
}
