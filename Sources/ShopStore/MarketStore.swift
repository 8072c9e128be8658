import Foundation
import Shop

/// Where a ``MarketSimulator`` reads the catalog and stores its changes: one implementation per engine.
package protocol MarketStore: Sendable {
    /// The ids of the catalog's products, in creation order (the walk picks among them by position).
    func productIds() async throws -> [String]

    /// Stores `changes`, in order, in one transaction (a product picked twice changes twice), each as a
    /// product edit is stored; skips products deleted since their ids were read.
    /// - Returns: The change-log entries written, in log order, with the events to publish for each.
    func store(_ changes: [MarketWalk.Change], at date: Date) async throws -> [(seq: Int64, events: [ShopEvent])]
}
