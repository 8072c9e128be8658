import GRDB
import Shop

/// Favourite marks over the shop database. Changes publish on the feed after they commit.
struct LiveFavoritesService: FavoritesService {
    let database: ShopDatabase
    let events: ShopEvents

    func isFavorite(productId: String) async throws -> Bool {
        try await StorageError.mapping {
            try await database.writer.read { db in
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM favorite WHERE productId = ?)",
                                  arguments: [productId]) ?? false
            }
        }
    }

    func setFavorite(productId: String, isFavorite: Bool) async throws {
        let changed = try await StorageError.mapping {
            try await database.writer.write { db in
                if isFavorite {
                    guard try StoredRows.product(db, id: productId) != nil else {
                        throw ShopError.productNotFound(productId)
                    }
                    try db.execute(sql: "INSERT OR IGNORE INTO favorite (productId) VALUES (?)", arguments: [productId])
                } else {
                    try db.execute(sql: "DELETE FROM favorite WHERE productId = ?", arguments: [productId])
                }
                return db.changesCount > 0
            }
        }
        if changed {
            await events.publish(.favoriteChanged(productId: productId, isFavorite: isFavorite))
        }
    }
}
