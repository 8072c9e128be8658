/// The settings of a market simulation (`storefront serve --simulate-market RATE`): prices and stock of
/// the catalog's products change as a seeded random walk, for demos and load tests. Never on unless asked.
public struct MarketSimulation: Equatable, Sendable {
    /// Changes per second.
    public var rate: Int
    /// Seeds the walk, so a run can be repeated exactly.
    public var seed: UInt64

    /// Creates the settings.
    public init(rate: Int, seed: UInt64) {
        self.rate = rate
        self.seed = seed
    }
}
