import Foundation
import GRDB
import Shop

/// The inbox's rows, written in the transactions whose changes produce notifications. (The inbox branch
/// supplies the implementation; until then no notification is written.)
enum InboxRows {
    /// Writes the notifications a product change produces (for example a favourited product's price
    /// lowered), in the current transaction, and returns the change-log entries it appended with the
    /// events to publish for each, in log order (after the product change's own entry).
    static func productChanged(_ db: Database, from old: Product, to new: Product, at now: Date) throws -> [(seq: Int64, events: [ShopEvent])] {
        []
    }
}
