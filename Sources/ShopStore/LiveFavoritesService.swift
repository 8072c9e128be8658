import Foundation
import GRDB
import Shop

/// Favourite marks over the shop database. Changes write a change-log entry and publish on the feed after
/// they commit.
struct LiveFavoritesService: FavoritesService {
    let database: ShopDatabase
    let feed: ChangeFeed
    let now: @Sendable () -> Date

    func isFavorite(productId: String, for shopper: Shopper) async throws -> Bool {
        try await StorageError.mapping {
            try await database.writer.read { db in
                try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM favorite WHERE owner = ? AND productId = ?)"),
                                  arguments: [shopper.storageKey, productId]) ?? false
            }
        }
    }

    func setFavorite(productId: String, isFavorite: Bool, for shopper: Shopper) async throws {
        let owner = shopper.storageKey
        let key = IdempotencyKey.current
        let sessionId = WritingSession.id
        let now = now()
        let seq = try await StorageError.mapping {
            try await database.write { db -> Int64? in
                try SessionCheck.requireLive(db, sessionId, at: now)
                if case .replay = try IdempotencyRecord.check(db, key) { return nil }
                if isFavorite {
                    guard try StoredRows.product(db, id: productId) != nil else {
                        throw ShopError.productNotFound(productId)
                    }
                    try db.execute(sql: "INSERT OR IGNORE INTO favorite (owner, productId) VALUES (?, ?)", arguments: [owner, productId])
                } else {
                    try db.execute(sql: "DELETE FROM favorite WHERE owner = ? AND productId = ?", arguments: [owner, productId])
                }
                let changed = db.changesCount > 0
                try IdempotencyRecord.record(db, key, at: now)
                guard changed else { return nil }
                return try ChangeLog.append(db, .favorite, ChangeLog.favoriteSubject(owner: owner, productId: productId, isFavorite: isFavorite), at: now)
            }
        }
        if let seq {
            await feed.committed(seq, [.favoriteChanged(productId: productId, isFavorite: isFavorite, shopper: shopper)])
        }
    }
}
