import JSON
import Shop
import ShopFeatures

extension DashboardViewModel: ScreenViewModel {}

/// `dashboard/reloadSection` params.
struct SectionArguments: Decodable { var section: DashboardSection }

extension ViewModelDefinition<ShopEnvironment> {
    /// `dashboard`: featured, categories, recent orders, recommendations and trending, each loaded on its own.
    public static let dashboard = ViewModelDefinition.screen(
        "dashboard",
        actions: [
            .action("reload", summary: "Reloads every section; superseded: true if a newer load replaced one.",
                    on: DashboardViewModel.self) { model in
                try await model.reload().resultMembers()
            },
            .action("reloadSection", summary: "Reloads one section; superseded: true if a newer load replaced it.",
                    on: DashboardViewModel.self, arguments: SectionArguments.self) { model, arguments in
                try await model.reloadSection(arguments.section).resultMembers()
            },
        ],
        make: { environment in DashboardViewModel(services: environment.services, session: environment.session) })
}
