import JSON
import Shop
import ShopFeatures

extension DashboardViewModel: ScreenViewModel {}

extension ViewModelDefinition {
    /// `dashboard`: featured, categories, recent orders and recommendations, each loaded on its own.
    public static func dashboard(services: ShopServices) -> ViewModelDefinition {
        struct Section: Decodable { var section: String }
        return .screen(
            "dashboard", summary: "Four sections loaded in parallel, each with its own phase and error.",
            stateSchemaName: "DashboardState",
            actions: [
                .action("reload", summary: "Reloads every section; superseded: true if a newer load replaced one.",
                        on: DashboardViewModel.self) { model in
                    try await model.reload().resultMembers()
                },
                .action(
                    "reloadSection", summary: "Reloads one section; superseded: true if a newer load replaced it.",
                    params: [param("section", ["type": "string", "enum": .array(DashboardSection.allCases.map { .string($0.rawValue) })])],
                    on: DashboardViewModel.self, arguments: Section.self
                ) { model, arguments in
                    try await model.reloadSection(arguments.section).resultMembers()
                },
            ],
            make: { _ in DashboardViewModel(services: services) })
    }
}
