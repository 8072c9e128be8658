import Shop

extension ViewModelDefinition {
    /// Every ViewModel type of the shop, over one set of services.
    public static func shop(services: ShopServices, clock: any Clock<Duration>) -> [ViewModelDefinition] {
        []
    }
}
