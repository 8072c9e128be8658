import Shop

/// The checks every store's inbox makes of a request before reading or writing anything.
package enum InboxChecks {
    /// Refuses guests: only accounts have an inbox.
    /// - Throws: ``ShopError`` `signInRequired`.
    package static func requireAccount(_ shopper: Shopper) throws {
        guard shopper.accountId != nil else { throw ShopError.signInRequired("see your notifications") }
    }

    /// The number of the notification a page starts after (nil: the newest page).
    /// - Throws: ``ShopError`` `notificationNotFound` for an id that names no notification.
    package static func pageStart(before id: String?) throws -> Int64? {
        try id.map { id in
            guard let seq = InboxNotification.seq(of: id) else { throw ShopError.notificationNotFound(id) }
            return seq
        }
    }
}
