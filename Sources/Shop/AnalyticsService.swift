import Foundation

/// Records what shoppers do and answers which products are trending.
///
/// Recording is fire-and-forget: ``record(_:)`` never throws, never waits and never fails the action that
/// records; live implementations hand the event to a bounded buffer that is written off the caller's path.
public protocol AnalyticsService: Sendable {
    /// Records `event`. Synchronous and cheap (a few microseconds at most); never blocks on storage. An
    /// event that cannot be kept (a full buffer, a failed write) is dropped and counted, not reported.
    func record(_ event: AnalyticsEvent)

    /// The products most viewed and added to carts since `since`, highest ``TrendingProduct/score`` first,
    /// ties by name; only products still in the catalog. Includes every event recorded before the call.
    /// - Parameters:
    ///   - since: The start of the period.
    ///   - limit: The most products to return.
    /// - Throws: ``ShopError`` `storageFailed` or `serviceUnavailable`.
    func trending(since: Date, limit: Int) async throws -> [TrendingProduct]

    /// Returns once every event recorded before the call is stored, or its write has failed: for tests, and
    /// for a server that is about to exit.
    func flush() async
}
