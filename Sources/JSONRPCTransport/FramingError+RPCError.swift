import JSONRPC

extension FramingError: RPCErrorConvertible {
    /// -32600 for a message over the size limit, -32700 for anything else that could not be framed; the
    /// message is the error's sentence.
    public var rpcError: RPCError {
        switch self {
        case .messageTooLarge: .invalidRequest(description)
        case .invalidHeader, .unexpectedBytes, .truncated: .parseError(description)
        }
    }
}
