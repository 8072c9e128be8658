import JSONRPC

extension RPCErrorCode {
    /// -32001: the action was refused (invalid form, quantity above stock, ...); state is unchanged.
    public static let actionRefused = RPCErrorCode(rawValue: -32001)
    /// -32003: a service or the storage failed; `data.retryable` says whether to try again.
    public static let actionFailed = RPCErrorCode(rawValue: -32003)
    /// -32004: the action named an `expectedVersion` the ViewModel has moved on from; nothing changed.
    public static let versionConflict = RPCErrorCode(rawValue: -32004)
}
