import JSON
import Shop
import ShopFeatures

extension LoginViewModel: ScreenViewModel {}

/// `login/login` params.
struct CredentialsArguments: Decodable {
    var email: String
    /// Hashed from its exact bytes: it may hold U+0000 (``ExactText``).
    var password: ExactText
}

/// `login/resume` params.
struct ResumeArguments: Decodable {
    var token: String
}

extension AccountSession {
    /// What a sign-in answers besides `version`: the token to keep, when it expires, and who signed in.
    var resultMembers: [String: JSONValue] {
        [
            "token": .string(token), "expiresAt": .string(Timestamp(expiresAt).iso8601),
            "accountId": .integer(account.id),
        ]
    }
}

extension ViewModelDefinition<ShopEnvironment> {
    /// `login`: the session's sign-in state machine.
    public static let login = ViewModelDefinition.screen(
        "login",
        actions: [
            .action("login", summary: "Signs in with email and password; answers token (keep it to resume), expiresAt and accountId. Refused unless logged out or failed.",
                    on: LoginViewModel.self, arguments: CredentialsArguments.self) { model, arguments in
                try await model.login(email: arguments.email, password: arguments.password.text).resultMembers
            },
            .action("resume", summary: "Signs in with a token kept from an earlier sign-in (in any server on the database); answers as login.",
                    on: LoginViewModel.self, arguments: ResumeArguments.self) { model, arguments in
                try await model.resume(token: arguments.token).resultMembers
            },
            .action("logout", summary: "Signs out: the token stops working everywhere; the session becomes a fresh guest.",
                    on: LoginViewModel.self) { model in
                try await model.logout()
                return [:]
            },
        ],
        make: { environment in LoginViewModel(services: environment.services, session: environment.session) })
}
