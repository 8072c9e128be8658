import JSON

/// A JSON-RPC error code: an open set, named by the statics below and by the extensions of modules that
/// define their own (as `ViewModelBinding` does for the shop's refusals and failures).
///
/// On the wire it is the bare integer (`"code": -32601`).
public struct RPCErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The integer written on the wire.
    public var rawValue: Int

    /// The code `rawValue`.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The integer, as on the wire.
    public var description: String { String(rawValue) }

    /// The code as the JSON value of an error object's `code` member.
    public var jsonValue: JSONValue { .integer(Int64(rawValue)) }
}

extension RPCErrorCode {
    /// -32700: the message is not valid JSON (or its framing is broken).
    public static let parseError = RPCErrorCode(rawValue: -32700)
    /// -32600: the message is JSON but not a valid request.
    public static let invalidRequest = RPCErrorCode(rawValue: -32600)
    /// -32601: no such method.
    public static let methodNotFound = RPCErrorCode(rawValue: -32601)
    /// -32602: the params do not fit the method.
    public static let invalidParams = RPCErrorCode(rawValue: -32602)
    /// -32603: the server failed while handling the request.
    public static let internalError = RPCErrorCode(rawValue: -32603)
    /// -32002: a request other than `initialize`, `ping` or `rpc.discover` came before `initialize`.
    public static let serverNotInitialized = RPCErrorCode(rawValue: -32002)
    /// -32800: the client cancelled the request with `$/cancelRequest`.
    public static let requestCancelled = RPCErrorCode(rawValue: -32800)
}
