import Foundation

extension ShopServices {
    /// These services with analytics recording turned off: every event is dropped at once, while trending
    /// still reads what is stored (what other servers, or earlier runs, recorded). For `serve
    /// --no-analytics`, and for the benchmark's comparison with recording on.
    public func recordingNoAnalytics() -> ShopServices {
        var services = self
        services.analytics = UnrecordedAnalytics(base: analytics)
        return services
    }
}

/// Drops every event; trending and flush go to the base.
private struct UnrecordedAnalytics: AnalyticsService {
    let base: any AnalyticsService

    func record(_ event: AnalyticsEvent) {}
    func trending(since: Date, limit: Int) async throws -> [TrendingProduct] {
        try await base.trending(since: since, limit: limit)
    }
    func flush() async {
        await base.flush()
    }
}
