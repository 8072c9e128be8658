import GRDB
import Shop

/// Turns database errors into ``ShopError`` `storageFailed`; other errors pass through.
enum StorageError {
    /// The ``ShopError`` for an error; `ShopError`s are returned as they are.
    static func map(_ error: any Error) -> any Error {
        if let error = error as? ShopError { return error }
        guard let error = error as? DatabaseError else { return error }
        let busy = error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
        return ShopError(
            reason: ShopError.Reason.storageFailed,
            message: busy ? "The database is busy. Please try again." : "The database failed: \(error.message ?? "\(error.resultCode)").",
            details: ["code": String(error.extendedResultCode.rawValue)],
            isRetryable: busy)
    }

    /// Runs `body`, turning database errors into ``ShopError`` `storageFailed`.
    static func mapping<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw map(error) }
    }
}
