import JSON
import JSONRPC
import Shop

extension ShopError: RPCErrorConvertible {
    /// -32001 for a refused action, -32003 for a failed service or storage; `data` carries the stable
    /// `reason`, the `details` and whether retrying may help.
    public var rpcError: RPCError {
        RPCError(
            code: isRefusal ? ShopErrorCodes.refused : ShopErrorCodes.failed,
            message: message,
            data: [
                "reason": .string(reason),
                "details": .object(details.mapValues { .string($0) }),
                "retryable": .bool(isRetryable),
            ])
    }
}

/// The JSON-RPC error codes of the shop's own errors.
public enum ShopErrorCodes {
    /// -32001: the action was refused (invalid form, quantity above stock, ...); state is unchanged.
    public static let refused = -32001
    /// -32003: a service or the storage failed; `data.retryable` says whether to try again.
    public static let failed = -32003
}
