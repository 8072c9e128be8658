import GRDB
import Shop

/// A SQLite database's change log, read for a ``ChangeFeed``: each batch in one read transaction.
struct SQLiteChangeLogSource: ChangeLogSource {
    let database: ShopDatabase
    /// The poll's own connection to a database file (nil for `":memory:"`, read through GRDB).
    private let probe: ChangeLogProbe?

    /// The log of `database`.
    init(database: ShopDatabase) {
        self.database = database
        probe = database.path == ":memory:" ? nil : ChangeLogProbe(path: database.path)
    }

    /// Read where it is called (the main thread, in the server's poll), on the probe's connection: one
    /// indexed row in a read transaction, where handing it to a reader queue and back woke two threads,
    /// 50 times a second for an idle server, and taking a reader from GRDB's pool cost ~80k instructions.
    func lastSeq() async throws -> Int64 {
        if let probe { return try probe.lastSeq() }
        return try lastSeqNow()
    }

    /// Synchronous, so that GRDB's synchronous `read` is the one called (in an async function the compiler
    /// would choose its async overload, which goes by way of the reader queue).
    private func lastSeqNow() throws -> Int64 {
        try database.writer.read { try ChangeLog.lastSeq($0) }
    }

    /// When the batch has other processes' entries and this server's commits do not sync the log themselves
    /// (``ShopDatabase/logSync``), asks for a sync before it returns: what the server then shows of them waits
    /// for it, as its own changes do, since the process that wrote them may not have synced them yet.
    func batch(after seq: Int64, knownSeqs: Set<Int64>, shown: ShownShoppers? = nil, limit: Int) async throws -> ChangeBatch {
        let batch = try await read(after: seq, knownSeqs: knownSeqs, shown: shown, limit: limit)
        if let logSync = database.logSync, batch.entries.contains(where: { !knownSeqs.contains($0.seq) }) {
            logSync.requestSync()
        }
        return batch
    }

    private func read(after seq: Int64, knownSeqs: Set<Int64>, shown: ShownShoppers?, limit: Int) async throws -> ChangeBatch {
        try await database.writer.read { db in
            let read = try ChangeLog.entries(db, after: seq, limit: limit)
            let entries = try zip(read, ChangeLog.readings(of: read, knownSeqs: knownSeqs, shown: shown)).map { entry, reading in
                guard case .read(let meaning) = reading else { return (entry.seq, [ShopEvent]()) }
                return (entry.seq, try Self.events(of: meaning, db: db))
            }
            return ChangeBatch(entries: entries, firstKept: try ChangeLog.firstSeq(db), lastWritten: try ChangeLog.lastSeq(db))
        }
    }

    /// The events of an entry, with the data it names as it is now.
    static func events(of meaning: ChangeLog.Meaning, db: Database) throws -> [ShopEvent] {
        switch meaning {
        case .cart(let shopper):
            return [.cartChanged(try StoredRows.cart(db, of: shopper), shopper: shopper)]
        case .favorite(let productId, let isFavorite, let shopper):
            return [.favoriteChanged(productId: productId, isFavorite: isFavorite, shopper: shopper)]
        case .order(let id):
            return try StoredRows.order(db, id: id).map { [.orderPlaced($0.order, shopper: $0.shopper)] } ?? []
        case .productCreated(let id):
            return try StoredRows.product(db, id: id).map { [.productCreated($0)] } ?? []
        case .productsDeleted(let ids):
            return [.productsDeleted(ids)]
        case .shopper(let shopper):
            return [.shopperDataChanged(shopper)]
        case .account(let id):
            return try AccountRows.account(db, id: id).map { [.accountChanged($0)] } ?? []
        case .sessionEnded(let sessionId):
            return [.sessionEnded(sessionId: sessionId)]
        case .productChanged(let id):
            return try StoredRows.product(db, id: id).map { [.productChanged($0)] } ?? []
        case .productMoved(let productId, let from, let to):
            return [.productMoved(productId: productId, from: from, to: to)]
        case .productRestocked(let productId):
            return [.productRestocked(productId: productId)]
        case .notification(let seq, let replacing):
            guard let (notification, owner) = try InboxRows.notification(db, seq: seq) else { return [] }
            return [.notificationArrived(notification, replacing: replacing,
                                         unreadCount: try InboxRows.unreadCount(db, owner: owner), shopper: owner)]
        case .notificationsRead(let owner, let ids):
            return [.notificationsRead(ids: ids, unreadCount: try InboxRows.unreadCount(db, owner: owner), shopper: owner)]
        case .resync:
            return [.resync]
        case .nothing:
            return []
        }
    }
}
