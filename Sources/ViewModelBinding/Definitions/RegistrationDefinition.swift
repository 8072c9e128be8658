import JSON
import Shop
import ShopFeatures

extension RegistrationViewModel: ScreenViewModel {}

/// `registration/setField` params.
struct RegistrationFieldArguments: Decodable {
    var field: RegistrationTextField
    /// A password may hold U+0000 (``ExactText``: it is hashed from its exact bytes); an email holding it is the
    /// field's error, as any other character outside an address is.
    var value: ExactText
}

/// The registration fields `setField` takes: the text ones (the terms are `setAcceptedTerms`'s).
enum RegistrationTextField: String, Codable, WireEnum {
    case email, password, confirmPassword

    init(from decoder: any Decoder) throws {
        try self.init(wireFrom: decoder)
    }

    var field: RegistrationField {
        switch self {
        case .email: .email
        case .password: .password
        case .confirmPassword: .confirmPassword
        }
    }
}

/// `registration/setAcceptedTerms` params.
struct AcceptedTermsArguments: Decodable {
    var accepted: Bool
}

extension ViewModelDefinition<ShopEnvironment> {
    /// `registration`: signing up, with fields checked 300 ms after their last change.
    public static let registration = ViewModelDefinition.screen(
        "registration",
        actions: [
            .action("setField", summary: "Sets email, password or confirmPassword; checked 300 ms after the last change. Passwords never appear in the state.",
                    on: RegistrationViewModel.self, arguments: RegistrationFieldArguments.self) { model, arguments in
                try model.setField(arguments.field.field, arguments.value.text)
                return [:]
            },
            .action("setAcceptedTerms", summary: "Accepts or declines the terms.",
                    on: RegistrationViewModel.self, arguments: AcceptedTermsArguments.self) { model, arguments in
                try model.setAcceptedTerms(arguments.accepted)
                return [:]
            },
            .action("register", summary: "Creates the account and signs the session in (the guest cart moves to it); answers as login/login. Refused while invalid (every error then shows), submitting or signed in; a registered email becomes the email's error.",
                    on: RegistrationViewModel.self) { model in
                try await model.register().resultMembers
            },
        ],
        make: { environment in
            RegistrationViewModel(services: environment.services, session: environment.session, clock: environment.clock)
        })
}
