/// An error that knows its JSON-RPC form. Handlers may throw these; other errors become -32603
/// (`DecodingError` becomes -32602 and `CancellationError` -32800).
public protocol RPCErrorConvertible: Error {
    /// The error object to answer with.
    var rpcError: RPCError { get }
}

extension RPCError: RPCErrorConvertible {
    /// Itself.
    public var rpcError: RPCError { self }
}

extension RPCError {
    /// The JSON-RPC form of any error a handler threw.
    public init(from error: any Error) {
        switch error {
        case let convertible as any RPCErrorConvertible:
            self = convertible.rpcError
        case is CancellationError:
            self = .requestCancelled
        case let decoding as DecodingError:
            self = RPCError(decoding)
        default:
            self = .internalError(String(describing: error))
        }
    }

    /// -32602 naming the parameter at the decoding error's coding path.
    init(_ error: DecodingError) {
        func path(_ codingPath: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            (codingPath + (key.map { [$0] } ?? [])).map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            self = .invalidParams(parameter: path(context.codingPath, key), reason: "is required")
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            self = .invalidParams(parameter: path(context.codingPath), reason: context.debugDescription)
        @unknown default:
            self = .invalidParams(parameter: "", reason: String(describing: error))
        }
    }
}
