import GRDB
import Shop

extension ShopDatabase {
    /// A private in-memory database holding a copy of this one's current contents, made with SQLite's
    /// backup API (`sqlite3_backup_step`): far quicker than migrating and seeding a new one, for tools
    /// that need many fresh stores (the fuzz harness makes one per input).
    ///
    /// ```swift
    /// let template = try ShopDatabase(path: ":memory:")   // migrated and seeded once
    /// let fresh = try template.inMemoryCopy()             // the same catalog, its own changes
    /// ```
    ///
    /// - Returns: A database at `":memory:"` that shares nothing with this one.
    /// - Throws: ``ShopError`` `storageFailed` when the copy cannot be made.
    public func inMemoryCopy() throws -> ShopDatabase {
        do {
            let copy = try DatabaseQueue(configuration: Self.configuration)
            try writer.backup(to: copy)
            return ShopDatabase(path: ":memory:", writer: copy)
        } catch {
            throw StorageError.map(error)
        }
    }
}
