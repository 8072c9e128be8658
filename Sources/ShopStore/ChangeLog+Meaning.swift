import Shop

extension ChangeLog {
    /// What an entry says, parsed from its kind and subject: the same for every engine, which then reads
    /// the data it names.
    package enum Meaning: Equatable, Sendable {
        /// A shopper's cart changed: read it.
        case cart(Shopper)
        /// A favourite mark changed (nothing to read).
        case favorite(productId: String, isFavorite: Bool, shopper: Shopper)
        /// An order was placed: read it.
        case order(id: String)
        /// A product was created: read it.
        case productCreated(id: String)
        /// Products were deleted.
        case productsDeleted([String])
        /// Several parts of a shopper's data changed.
        case shopper(Shopper)
        /// An account's profile changed: read it.
        case account(id: Int64)
        /// A session was signed out.
        case sessionEnded(sessionId: String)
        /// A product's price, stock or text changed: read it.
        case productChanged(id: String)
        /// A product moved to another category.
        case productMoved(productId: String, from: String, to: String)
        /// A product came back in stock.
        case productRestocked(productId: String)
        /// A notification arrived (replacing an unread one, when named): read it and its owner's unread count.
        case notification(seq: Int64, replacing: String?)
        /// Notifications were marked read (nil: all): read the owner's unread count.
        case notificationsRead(owner: Shopper, ids: [String]?)
        /// Everything may have changed (a reset, or an entry that cannot be placed): reload.
        case resync
        /// Nothing to publish.
        case nothing
    }
}

extension ChangeLog.Meaning {
    /// The shopper whose sessions alone show what the entry says, for the entries that need a read (a cart,
    /// an account's profile, an inbox's unread count); nil for what every session shows, or may (products,
    /// orders: their stock), and for what costs no read.
    package var shownOnlyTo: Shopper? {
        switch self {
        case .cart(let shopper): shopper
        case .account(let id): .account(id)
        case .notificationsRead(let owner, _): owner
        default: nil
        }
    }

    /// Whether publishing the entry needs data beyond the entry (a cart, an order, a product, an account, a
    /// notification or an unread count); the others' events are made from the entry alone.
    package var needsRead: Bool {
        switch self {
        case .cart, .order, .productCreated, .account, .productChanged, .notification, .notificationsRead: true
        case .favorite, .productsDeleted, .shopper, .sessionEnded, .productMoved, .productRestocked, .resync, .nothing: false
        }
    }
}

extension ChangeLog.Reading {
    /// Whether the entry's data must be read (see ``ChangeLog/Meaning/needsRead``).
    package var needsRead: Bool {
        if case .read(let meaning) = self { meaning.needsRead } else { false }
    }
}

extension ChangeLog.Entry {
    /// What this entry says.
    package var meaning: ChangeLog.Meaning {
        switch kind {
        case .cart:
            // An entry from before accounts (no subject) cannot be placed: reload everything.
            return Shopper(storageKey: subject).map { .cart($0) } ?? .resync
        case .favorite:
            guard let space = subject.firstIndex(of: " "), let shopper = Shopper(storageKey: String(subject[..<space]))
            else { return .resync }
            let parts = subject[subject.index(after: space)...].split(separator: ":")
            guard parts.count == 2 else { return .nothing }
            return .favorite(productId: String(parts[0]), isFavorite: parts[1] == "1", shopper: shopper)
        case .order:
            return .order(id: subject)
        case .productCreated:
            return .productCreated(id: subject)
        case .productsDeleted:
            return .productsDeleted(subject.split(separator: ",").map(String.init))
        case .shopper:
            return Shopper(storageKey: subject).map { .shopper($0) } ?? .nothing
        case .account:
            return Int64(subject).map { .account(id: $0) } ?? .nothing
        case .sessionEnded:
            return .sessionEnded(sessionId: subject)
        case .productChanged:
            return .productChanged(id: subject)
        case .productMoved:
            let parts = subject.split(separator: " ").map(String.init)
            guard parts.count == 3 else { return .resync }
            return .productMoved(productId: parts[0], from: parts[1], to: parts[2])
        case .productRestocked:
            return .productRestocked(productId: subject)
        case .notification:
            let ids = subject.split(separator: " ").map(String.init)
            guard let seq = ids.first.flatMap(InboxNotification.seq(of:)) else { return .nothing }
            return .notification(seq: seq, replacing: ids.dropFirst().first)
        case .notificationsRead:
            let parts = subject.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, let owner = Shopper(storageKey: parts[0]) else { return .nothing }
            return .notificationsRead(owner: owner, ids: parts[1] == "*" ? nil : parts[1].split(separator: ",").map(String.init))
        case .reset, nil:
            return .resync
        }
    }
}
