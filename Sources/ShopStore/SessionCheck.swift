import Foundation
import GRDB
import Shop

/// The check each write made for a signed-in session (``WritingSession``) runs first in its own transaction:
/// the session is still live in the store. One read of `account_session` by its primary key.
///
/// On SQLite one connection writes at a time, so a sign-out committed by any server before the write's
/// transaction began is seen here, and none can commit between this read and the write's commit.
enum SessionCheck {
    private static let liveSQL = StatementSQL("SELECT 1 FROM account_session WHERE id = ? AND endedAt IS NULL AND expiresAt > ?")

    /// Throws unless the session `sessionId` is neither ended nor expired at `now`; nil (a guest's write, or
    /// one the server makes on its own) passes.
    /// - Throws: ``ShopError/sessionEnded``; a `DatabaseError` when the read fails.
    static func requireLive(_ db: Database, _ sessionId: String?, at now: Date) throws {
        guard let sessionId else { return }
        let live = try DirectStatement(db, liveSQL).one([.text(sessionId), .integer(StoredDate.milliseconds(now))]) { _ in true }
        guard live != nil else { throw ShopError.sessionEnded }
    }
}
