import Shop
import ShopFeatures

/// What the shop's ViewModels are made in: the services, the connection's session and the clock they
/// debounce and time out with.
public struct ShopEnvironment: Sendable {
    /// The shop's services and change feed.
    public var services: ShopServices
    /// The connection's session: whose cart, favourites and orders the ViewModels show.
    public var session: ShopSession
    /// The clock of debounces and timers.
    public var clock: any Clock<Duration>

    /// An environment over `services`, `session` and `clock`.
    public init(services: ShopServices, session: ShopSession, clock: any Clock<Duration>) {
        self.services = services
        self.session = session
        self.clock = clock
    }
}
