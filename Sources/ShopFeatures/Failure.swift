import Shop

/// How a ViewModel treats an error thrown by a service.
enum Failure {
    /// The task was cancelled: not an error to show.
    case cancelled
    /// The service refused the action (a ``ShopError`` that is a refusal): rethrow, change nothing.
    case refused(ShopError)
    /// Something failed operationally: record it in the state.
    case operational(ErrorInfo)

    init(_ error: any Error) {
        switch error {
        case is CancellationError:
            self = .cancelled
        case let error as ShopError where error.isRefusal:
            self = .refused(error)
        case let error as ShopError:
            self = .operational(ErrorInfo(message: error.message, retryable: error.isRetryable))
        default:
            self = .operational(ErrorInfo(message: "Something went wrong: \(error)", retryable: true))
        }
    }

    /// What an action's task hands back to its caller: the error to rethrow, or nil. A refusal is
    /// rethrown; a cancellation is rethrown as `CancellationError` (the action did not happen, so it must
    /// not answer success); an operational failure goes to `show` (into the state) instead.
    static func thrown(_ error: any Error, showing show: (ErrorInfo) -> Void) -> (any Error)? {
        switch Failure(error) {
        case .cancelled: return CancellationError()
        case .refused(let error): return error
        case .operational(let info):
            show(info)
            return nil
        }
    }

    /// The failure as shown when loading content fails: refusals (such as `productNotFound`) are shown too.
    static func loadError(_ error: any Error) -> ErrorInfo? {
        switch Failure(error) {
        case .cancelled: nil
        case .refused(let error): ErrorInfo(message: error.message, retryable: false)
        case .operational(let info): info
        }
    }
}

