import Foundation
import PostgresNIO
import Shop
import ShopStore

/// Favourite marks over PostgreSQL. A change writes a change-log entry and is published after it commits.
struct PostgresFavoritesService: FavoritesService {
    let database: PostgresShopDatabase
    let feed: ChangeFeed
    let now: @Sendable () -> Date

    func isFavorite(productId: String, for shopper: Shopper) async throws -> Bool {
        try await database.read { session in
            try await session.execute("SELECT 1 FROM favorite WHERE owner = \(shopper.storageKey) AND productId = \(productId)") > 0
        }
    }

    func setFavorite(productId: String, isFavorite: Bool, for shopper: Shopper) async throws {
        let owner = shopper.storageKey
        let key = IdempotencyKey.current
        let sessionId = WritingSession.id
        let now = now()
        let seq = try await database.write { session -> Int64? in
            try await PostgresSessionCheck.requireLive(session, sessionId, at: now)
            if case .replay = try await PostgresIdempotency.check(session, key) { return nil }
            let changed: Int
            if isFavorite {
                guard try await PostgresRows.productKeptFromDeletion(session, id: productId) != nil else { throw ShopError.productNotFound(productId) }
                changed = try await session.execute("""
                    INSERT INTO favorite (owner, productId) VALUES (\(owner), \(productId)) ON CONFLICT DO NOTHING RETURNING 1
                    """)
            } else {
                changed = try await session.execute("DELETE FROM favorite WHERE owner = \(owner) AND productId = \(productId) RETURNING 1")
            }
            try await PostgresIdempotency.record(session, key, at: now)
            guard changed > 0 else { return nil }
            return try await PostgresChangeLog.append(
                session, .favorite, ChangeLog.favoriteSubject(owner: owner, productId: productId, isFavorite: isFavorite), at: now)
        }
        if let seq {
            await feed.committed(seq, [.favoriteChanged(productId: productId, isFavorite: isFavorite, shopper: shopper)])
        }
    }
}
