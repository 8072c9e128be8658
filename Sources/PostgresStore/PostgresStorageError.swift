import PostgresNIO
import Shop

/// Turns PostgreSQL and connection errors into ``ShopError`` `storageFailed`; other errors pass through.
///
/// Retryable (the same request may succeed soon): the server unreachable, restarting or shutting down, a
/// dropped connection, too many connections, a lock or serialization conflict left after the store's own
/// retries, and a database that did not answer within ``PostgresShopDatabase/answerTimeout`` (5 s by default). A request
/// that failed with a retryable error may still have been stored when the connection dropped during its
/// COMMIT: a retry with the same idempotency key is answered from what was stored.
enum PostgresStorageError {
    /// The ``ShopError`` for an error; `ShopError`s and cancellations are returned as they are.
    static func map(_ error: any Error) -> any Error {
        if error is ShopError || error is CancellationError { return error }
        if error is AnswerTimeout {
            return unavailable(
                "The database did not answer in time. Please try again (a change sent with an idempotency key is applied at most once).",
                code: "timeout")
        }
        guard let error = error as? PSQLError else { return error }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "\(error.code)"
            if isRetryableState(state) {
                return unavailable("The database is busy or restarting (\(message)). Please try again.", code: state)
            }
            return ShopError(
                reason: ShopError.Reason.storageFailed, message: "The database failed: \(message).",
                details: ["code": state], isRetryable: false)
        case .queryCancelled:
            return CancellationError()
        default:
            // No answer from the server at all: the connection could not be made, or was lost.
            return unavailable("The database is unreachable (\(error.code)). Please try again.", code: "\(error.code)")
        }
    }

    /// Whether a SQLSTATE says the same request may succeed if tried again: connection exceptions (08),
    /// insufficient resources (53), operator intervention such as a shutdown (57), transaction rollbacks
    /// for serialization failures and deadlocks (40), a lock timeout (55P03) and a read-only standby (25006).
    static func isRetryableState(_ state: String) -> Bool {
        state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57") || state.hasPrefix("40")
            // A lock not available under a `lock_timeout`; a read-only transaction (a server just failed over).
            || state == "55P03" || state == "25006"
    }

    /// Whether the transaction that failed with `error` may simply be run again at once (a serialization
    /// failure or a deadlock: the server rolled it back and nothing of it was stored).
    static func isConflict(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return false }
        let state = error.serverInfo?[.sqlState]
        return state == "40001" || state == "40P01"
    }

    /// The SQLSTATE of a server error, if `error` is one.
    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    private static func unavailable(_ message: String, code: String) -> ShopError {
        ShopError(reason: ShopError.Reason.storageFailed, message: message, details: ["code": code], isRetryable: true)
    }

    /// Runs `body`, turning database errors into ``ShopError`` `storageFailed`.
    static func mapping<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw map(error) }
    }
}

/// A database operation that did not finish within its deadline.
struct AnswerTimeout: Error {}
