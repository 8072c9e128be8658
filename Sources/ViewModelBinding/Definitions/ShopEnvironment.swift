import Shop

/// What the shop's ViewModels are made in: the services and the clock they debounce and time out with.
public struct ShopEnvironment: Sendable {
    /// The shop's services and change feed.
    public var services: ShopServices
    /// The clock of debounces and timers.
    public var clock: any Clock<Duration>

    /// An environment over `services` and `clock`.
    public init(services: ShopServices, clock: any Clock<Duration>) {
        self.services = services
        self.clock = clock
    }
}
