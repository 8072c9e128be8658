import Foundation
import GRDB
import Shop

/// Turns database errors into ``ShopError`` `storageFailed`; other errors pass through.
enum StorageError {
    /// The ``ShopError`` for an error; `ShopError`s are returned as they are.
    static func map(_ error: any Error) -> any Error {
        if let error = error as? ShopError { return error }
        guard let error = error as? DatabaseError else { return error }
        // An access interrupted because its task was cancelled stored nothing: a cancellation, not a failure.
        if error.resultCode == .SQLITE_INTERRUPT { return CancellationError() }
        let busy = error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
        return ShopError(
            reason: ShopError.Reason.storageFailed,
            message: busy ? "The database is busy. Please try again." : "The database failed: \(error.message ?? "\(error.resultCode)").",
            details: ["code": String(error.extendedResultCode.rawValue)],
            isRetryable: busy)
    }

    /// The error for a database file that cannot be opened or migrated: it names the file, and the folder
    /// when that is what is missing, since SQLite's own text ("unable to open database file") names neither.
    static func openingFailed(path: String, _ error: any Error) -> any Error {
        guard var shopError = map(error) as? ShopError else { return error }
        let folder = (path as NSString).deletingLastPathComponent
        var problem = shopError.message
        if problem.hasPrefix("The database failed: ") { problem = String(problem.dropFirst("The database failed: ".count)) }
        if path != ":memory:", !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            problem += " (the folder \(folder) does not exist)"
        }
        shopError.message = "Cannot open the database \(path): \(problem)"
        shopError.details["path"] = path
        return shopError
    }

    /// Runs `body`, turning database errors into ``ShopError`` `storageFailed`.
    static func mapping<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw map(error) }
    }
}
