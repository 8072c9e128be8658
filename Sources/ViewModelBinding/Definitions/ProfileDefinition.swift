import JSON
import Shop
import ShopFeatures

extension ProfileViewModel: ScreenViewModel {}

/// `profile/setField` params.
struct ProfileFieldArguments: Decodable {
    var field: ProfileField
    var value: String
}

/// `profile/setNotificationsEnabled` params.
struct NotificationsArguments: Decodable {
    var enabled: Bool
}

extension ViewModelDefinition<ShopEnvironment> {
    /// `profile`: the signed-in account's name, email, bio and notifications switch. Opening it signed out
    /// is refused (`signInRequired`).
    public static let profile = ViewModelDefinition.screen(
        "profile",
        actions: [
            .action("setField", summary: "Sets name, email or bio in the draft.",
                    on: ProfileViewModel.self, arguments: ProfileFieldArguments.self) { model, arguments in
                try model.setField(arguments.field, arguments.value)
                return [:]
            },
            .action("setNotificationsEnabled", summary: "Turns notifications on or off in the draft.",
                    on: ProfileViewModel.self, arguments: NotificationsArguments.self) { model, arguments in
                try model.setNotificationsEnabled(arguments.enabled)
                return [:]
            },
            .action("discardChanges", summary: "Puts the stored profile back into the draft.", on: ProfileViewModel.self) { model in
                try model.discardChanges()
                return [:]
            },
            .action("save", summary: "Saves the draft; every open ViewModel of the account, in every server, shows it. Refused while invalid (every error then shows); a taken email becomes the email's error.", stores: true,
                    on: ProfileViewModel.self) { model in
                try await model.save()
                return [:]
            },
            .action("refresh", summary: "Loads the profile again (the retry after a failed load); the draft is replaced.",
                    on: ProfileViewModel.self) { model in
                try await model.refresh().resultMembers()
            },
        ],
        make: { environment in try ProfileViewModel(services: environment.services, session: environment.session) })
}
