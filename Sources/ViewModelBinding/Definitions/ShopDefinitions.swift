import Shop

extension ViewModelDefinition {
    /// Every ViewModel type of the shop, over one set of services.
    public static func shop(services: ShopServices, clock: any Clock<Duration>) -> [ViewModelDefinition] {
        [
            .catalog(services: services, clock: clock),
            .productDetail(services: services, clock: clock),
            .productForm(services: services),
            .cart(services: services),
            .dashboard(services: services),
        ]
    }
}
