import JSON
import Shop
import ShopFeatures

extension NotificationsViewModel: ScreenViewModel {}

/// `notifications/markAsRead` params.
struct NotificationIdArguments: Decodable {
    var id: String
}

extension ViewModelDefinition<ShopEnvironment> {
    /// `notifications`: the signed-in account's inbox, newest first, live from every server. Opening it
    /// signed out is refused (`signInRequired`).
    public static let notifications = ViewModelDefinition.screen(
        "notifications",
        actions: [
            .action("markAsRead", summary: "Marks one loaded notification read, in every open inbox of the account; an id not in items is refused (notificationNotFound).",
                    on: NotificationsViewModel.self, arguments: NotificationIdArguments.self) { model, arguments in
                try await model.markAsRead(arguments.id)
                return [:]
            },
            .action("markAllRead", summary: "Marks every notification of the account read, loaded or not.",
                    on: NotificationsViewModel.self) { model in
                try await model.markAllRead()
                return [:]
            },
            .action("loadMore", summary: "Appends the next 20 older notifications; a failure shows in loadMorePhase and calling again retries.",
                    on: NotificationsViewModel.self) { model in
                try await model.loadMore().resultMembers()
            },
            .action("refresh", summary: "Loads the newest page again (the retry after a failed load).",
                    on: NotificationsViewModel.self) { model in
                try await model.refresh().resultMembers()
            },
        ],
        make: { environment in try NotificationsViewModel(services: environment.services, session: environment.session) })
}
