import Foundation
import PostgresNIO
import Shop
import ShopStore

/// The check each write made for a signed-in session (``WritingSession``) runs in its own transaction: the
/// session is still live in the store. One read of `account_session` by its primary key, which also takes the
/// row's share lock (`FOR SHARE`) until the transaction ends: a sign-out's update of the row waits for the
/// write's commit, so no write of a session commits after its sign-out did. The lock costs the row a lock mark
/// (a write of its page); shared by several writes of one session at once, it does not make them wait for
/// each other.
///
/// Cart changes and checkouts fold the same condition (``liveCondition(id:now:)``) into the statement that takes
/// their cart's lock, to spare a round trip; the other writes run ``requireLive(_:_:at:)``.
enum PostgresSessionCheck {
    /// The SQL condition that session `id` (a placeholder for a nullable text; NULL passes) is live at `now` (a
    /// placeholder for milliseconds), locking its row as above.
    static func liveCondition(id: String, now: String) -> String {
        """
        (\(id)::text IS NULL OR EXISTS (
            SELECT 1 FROM account_session WHERE id = \(id)::text AND endedAt IS NULL AND expiresAt > \(now)::bigint FOR SHARE))
        """
    }

    /// Throws unless session `sessionId` is neither ended nor expired at `now`; nil (a guest's write, or one the
    /// server makes on its own) passes without a round trip.
    /// - Throws: ``ShopError/sessionEnded``; the storage's failure.
    static func requireLive(_ session: PostgresSession, _ sessionId: String?, at now: Date) async throws {
        guard let sessionId else { return }
        guard try await session.first(Live(sessionId: sessionId, now: StoredDate.milliseconds(now))) != nil else {
            throw ShopError.sessionEnded
        }
    }

    /// The read of ``requireLive(_:_:at:)``, prepared.
    private struct Live: PostgresPreparedQuery {
        static let name = "storefront_session_live"
        static let sql = "SELECT 1 WHERE \(liveCondition(id: "$1", now: "$2"))"
        let sessionId: String
        let now: Int64
        func makeBindings() throws -> PostgresBindings { try .values(sessionId, now) }
    }
}
