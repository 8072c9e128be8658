import JSON

/// Signing a bench session in over the wire. Every server process is a session of its own, a guest until
/// it signs in: servers that must show one cart sign in to one account, and a checkout needs one.
extension BenchSession {
    /// What a sign-in answered: the token to resume in other servers, and whose account it is.
    struct SignedIn {
        var token: String
        var accountId: Int64
    }

    /// The password the bench registers with.
    static let benchPassword = "Bench-password-1"

    /// Registers a new account with `email` (a `registration` ViewModel opened, filled in, `register`,
    /// closed) and signs the session in. Costs one Argon2id hash (~100 ms): register once, then ``resume(_:)``.
    func signUp(email: String) throws -> SignedIn {
        let (form, _) = try open("registration")
        for (field, value) in [("email", email), ("password", Self.benchPassword), ("confirmPassword", Self.benchPassword)] {
            _ = try call("registration/setField", ["viewModel": .string(form), "field": .string(field), "value": .string(value)])
        }
        _ = try call("registration/setAcceptedTerms", ["viewModel": .string(form), "accepted": true])
        let signedIn = try Self.signedIn(try call("registration/register", ["viewModel": .string(form)]).result)
        _ = try call("viewModel/close", ["viewModel": .string(form)])
        return signedIn
    }

    /// Signs the session in to `account` with its token (`login/resume`; no hash).
    func resume(_ account: SignedIn) throws {
        let (login, _) = try open("login")
        let resumed = try Self.signedIn(try call("login/resume", ["viewModel": .string(login), "token": .string(account.token)]).result)
        _ = try call("viewModel/close", ["viewModel": .string(login)])
        guard resumed.accountId == account.accountId else {
            throw BenchError(description: "login/resume signed in account \(resumed.accountId), not \(account.accountId)")
        }
    }

    private static func signedIn(_ result: JSONValue) throws -> SignedIn {
        guard let token = result["token"]?.stringValue, let accountId = result["accountId"]?.integerValue else {
            throw BenchError(description: "a sign-in answered no token or accountId: \(result)")
        }
        return SignedIn(token: token, accountId: accountId)
    }
}
