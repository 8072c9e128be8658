import JSON
import Testing

/// An account a test signed up, as a client keeps it: the token to resume it in other servers (or after a
/// restart) and the owner key its cart, favourites and orders are stored under.
struct SignedInAccount: Equatable, Sendable {
    let token: String
    let accountId: Int64

    /// The owner key of the account's rows (`cart_line.owner`, `customer_order.owner`, ...).
    var owner: String { "a:\(accountId)" }
}

// Signing a test's session in over the wire, as a front end does: every server process is a session of its
// own, a guest until it signs in, so servers that must share one cart (or a test that checks out) sign in to
// one account. Argon2id makes a registration cost ~100 ms, so a test registers once and resumes the token in
// every other server (a resume hashes nothing).

extension MirroringClient {
    /// The password tests register with (at least 8 characters and a digit).
    static let testPassword = "Correct-horse-42"

    /// Signs the session up as a new account with `email` through a `registration` ViewModel (opened, filled
    /// in, `register`, closed again) and returns what `register` answered.
    func signUp(email: String, password: String = MirroringClient.testPassword) throws -> SignedInAccount {
        let form = try open("registration")
        for (field, value) in [("email", email), ("password", password), ("confirmPassword", password)] {
            _ = try result("registration/setField", ["viewModel": .string(form), "field": .string(field), "value": .string(value)])
        }
        _ = try result("registration/setAcceptedTerms", ["viewModel": .string(form), "accepted": true])
        let account = try Self.signedIn(try result("registration/register", ["viewModel": .string(form)]), by: "register")
        _ = try result("viewModel/close", ["viewModel": .string(form)])
        return account
    }

    /// Signs the session in with `account`'s kept token (`login/resume` on a `login` ViewModel, closed again)
    /// and checks that it is the same account.
    func resume(_ account: SignedInAccount) throws {
        let login = try open("login")
        let resumed = try Self.signedIn(try result("login/resume", ["viewModel": .string(login), "token": .string(account.token)]), by: "login/resume")
        _ = try result("viewModel/close", ["viewModel": .string(login)])
        guard resumed.accountId == account.accountId else {
            throw ServerProcessError(description: "login/resume signed in account \(resumed.accountId), not \(account.accountId)")
        }
    }

    /// The account a sign-in's result names.
    static func signedIn(_ result: JSONValue, by method: String) throws -> SignedInAccount {
        guard let token = result["token"]?.stringValue, let accountId = result["accountId"]?.integerValue else {
            throw ServerProcessError(description: "\(method) answered no token or accountId: \(result)")
        }
        return SignedInAccount(token: token, accountId: accountId)
    }
}
