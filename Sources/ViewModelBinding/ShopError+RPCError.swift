import JSON
import JSONRPC
import Shop

extension ShopError: RPCErrorConvertible {
    /// -32001 for a refused action, -32003 for a failed service or storage; `data` carries the stable
    /// `reason`, the `details` and whether retrying may help.
    public var rpcError: RPCError {
        RPCError(
            code: isRefusal ? .actionRefused : .actionFailed,
            message: message,
            data: [
                "reason": .string(reason),
                "details": .object(details.mapValues { .string($0) }),
                "retryable": .bool(isRetryable),
            ])
    }
}

extension RPCError {
    /// -32004: the client acted on version `expected` of a ViewModel that is at `current` now.
    static func versionConflict(expected: Int, current: Int) -> RPCError {
        RPCError(
            code: .versionConflict,
            message: "Version conflict: the ViewModel is at version \(current), not \(expected); nothing changed",
            data: ["expectedVersion": .integer(Int64(expected)), "currentVersion": .integer(Int64(current))])
    }
}
