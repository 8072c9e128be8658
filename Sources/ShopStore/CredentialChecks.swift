import Shop

/// The checks of what a client sent to register or sign in, made by every store before it hashes,
/// reads or stores anything (a screen's own checks can be skipped by a client).
package enum CredentialChecks {
    /// Checks a registration; returns the email as stored (``AccountRules/normalizedEmail(_:)``).
    /// - Throws: ``ShopError`` `validationFailed`, with a message per field (`email`, `password`).
    package static func registration(email: String, password: String) throws -> String {
        let email = AccountRules.normalizedEmail(email)
        var errors: [String: String] = [:]
        errors["email"] = AccountRules.emailError(email)
        errors["password"] = AccountRules.passwordError(password)
        guard errors.isEmpty else { throw ShopError.validationFailed(errors) }
        return email
    }

    /// Checks a sign-in's fields for shape only (a malformed email names no account, so nothing is read or
    /// counted for it); returns the email as stored.
    /// - Throws: ``ShopError`` `validationFailed` (`email` or `password`).
    package static func signIn(email: String, password: String) throws -> String {
        let email = AccountRules.normalizedEmail(email)
        if let error = AccountRules.emailError(email) { throw ShopError.validationFailed(["email": error]) }
        if password.isEmpty || password.utf8.count > AccountRules.passwordMaximumBytes {
            throw ShopError.validationFailed(["password": "Enter your password (at most \(AccountRules.passwordMaximumBytes) bytes)."])
        }
        return email
    }
}
