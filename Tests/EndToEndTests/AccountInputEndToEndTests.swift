import GRDB
import JSON
import Testing

/// Hostile input to the registration, login and profile screens over real pipes: emails and names of
/// 10 000 characters, control characters, SQL and JSON injection, wrong types. Each is a clear -32602
/// naming the parameter or a -32001 `validationFailed` naming the field (also in the state's `errors`);
/// the server keeps serving; nothing invalid is stored (the file is read to check), and what is valid
/// (an injection string as a name) is stored as the literal text it is. No password ever appears in a
/// response, a notification or the server's log.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct AccountInputEndToEndTests {
    static let longEmail = String(repeating: "a", count: 10_000 - "@example.com".count) + "@example.com"
    static let hostileEmails = [
        longEmail, "esc\u{001b}[2J@example.com", "'; DROP TABLE account; --",
        "x@example.com' OR '1'='1", #"{"a":1}"#, #"{"email":"admin@example.com"}@example.com"#,
    ]
    static let hostileNames = [String(repeating: "n", count: 10_000), "esc\u{001b}[31mname"]
    static let injections = ["'; DROP TABLE account; --", #"{"a":1}"#, #"Robert"); DELETE FROM cart_line; --"#, #"\u0000"#]
    /// Every password the test sends: none may come back in any message or the log.
    static let passwords = ["Hostile-pw-9731", String(repeating: "P4ss", count: 2_500), "Wrong-pw-secret-1", MirroringClient.testPassword]

    func reason(of answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    /// Expects `answer` to be -32001 `validationFailed` naming `field` in its details.
    func expectFieldError(_ answer: JSONValue, _ field: String, _ context: String) {
        #expect(answer["error"]?["code"] == -32001 && reason(of: answer) == "validationFailed", "\(context): \(answer.description.prefix(300))")
        #expect(answer["error"]?["data"]?["details"]?[field]?.stringValue != nil, "\(context): \(answer.description.prefix(300))")
    }

    @Test func hostileSignUpSignInAndProfileInputIsRefusedClearlyStoresNothingAndNeverEchoesAPassword() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let server = try ServerProcess(["--database", path, "--framing", "ndjson", "--log-level", "debug"], timeoutSeconds: 60)
        let client = MirroringClient(server)
        client.transcript = []
        try client.initialize()
        func set(_ handle: String, _ method: String, _ field: String, _ value: String) throws {
            _ = try client.result(method, ["viewModel": .string(handle), "field": .string(field), "value": .string(value)])
        }

        // Registration: each hostile email is the email field's error, and no account is stored.
        let form = try client.open("registration")
        try set(form, "registration/setField", "password", Self.passwords[0])
        try set(form, "registration/setField", "confirmPassword", Self.passwords[0])
        _ = try client.result("registration/setAcceptedTerms", ["viewModel": .string(form), "accepted": true])
        for email in Self.hostileEmails {
            try set(form, "registration/setField", "email", email)
            let answer = try client.call("registration/register", ["viewModel": .string(form)])
            expectFieldError(answer, "email", "register \(email.prefix(40).debugDescription)")
            #expect(try client.get(form).state["errors"]?["email"]?.stringValue != nil)
            #expect(try Self.count(path, "SELECT COUNT(*) FROM account") == 0)
        }
        // A password may hold U+0000 (it is hashed from its bytes), so registration's field value takes it: an
        // email holding it is the email's error, like any control character.
        try set(form, "registration/setField", "email", "nul\u{0000}@example.com")
        expectFieldError(try client.call("registration/register", ["viewModel": .string(form)]), "email", "an email holding U+0000")
        #expect(try Self.count(path, "SELECT COUNT(*) FROM account") == 0)
        try set(form, "registration/setField", "email", "valid@example.com")
        try set(form, "registration/setField", "password", Self.passwords[1])
        try set(form, "registration/setField", "confirmPassword", Self.passwords[1])
        expectFieldError(try client.call("registration/register", ["viewModel": .string(form)]), "password", "a 10 000-character password")
        #expect(try Self.count(path, "SELECT COUNT(*) FROM account") == 0)
        _ = try client.result("ping")

        // Wrong types, and text holding U+0000 (which SQLite would cut there; a password excepted): -32602 naming
        // the parameter.
        let login = try client.open("login")
        let wrongTypes: [(method: String, params: JSONValue, parameter: String)] = [
            ("registration/setField", ["viewModel": .string(form), "field": "email", "value": 5], "value"),
            ("registration/setField", ["viewModel": .string(form), "field": "email", "value": ["a": 1]], "value"),
            ("registration/setField", ["viewModel": .string(form), "field": "username", "value": "x"], "field"),
            ("registration/setField", ["viewModel": .string(form), "field": 5, "value": "x"], "field"),
            ("registration/setAcceptedTerms", ["viewModel": .string(form), "accepted": "true"], "accepted"),
            ("login/login", ["viewModel": .string(login), "email": 5, "password": .string(Self.passwords[2])], "email"),
            ("login/login", ["viewModel": .string(login), "email": "valid@example.com", "password": [.string(Self.passwords[2])]], "password"),
            ("login/login", ["viewModel": .string(login), "email": "valid@example.com"], "password"),
            ("login/resume", ["viewModel": .string(login), "token": ["a": 1]], "token"),
            ("login/resume", ["viewModel": .string(login), "token": 12], "token"),
            ("login/login", ["viewModel": .string(login), "email": "nul\u{0000}@example.com", "password": .string(Self.passwords[2])], "email"),
        ]
        for call in wrongTypes {
            let answer = try client.call(call.method, call.params)
            #expect(answer["error"]?["code"] == -32602 && answer["error"]?["data"]?["parameter"] == .string(call.parameter),
                    "\(call.method) \(call.params): \(answer)")
        }
        _ = try client.result("ping")

        // Signing in with hostile input: refused before anything is read or stored (no failure counted).
        for email in Self.hostileEmails {
            let answer = try client.call("login/login", ["viewModel": .string(login), "email": .string(email), "password": .string(Self.passwords[2])])
            expectFieldError(answer, "email", "login \(email.prefix(40).debugDescription)")
        }
        expectFieldError(try client.call("login/login", ["viewModel": .string(login), "email": "valid@example.com", "password": .string(Self.passwords[1])]),
                         "password", "login with a 10 000-character password")
        #expect(try Self.count(path, "SELECT COUNT(*) FROM sign_in_failure") == 0)
        #expect(try client.get(login).state["user"] == .null)
        _ = try client.result("ping")

        // The profile of a real account: hostile names, emails and bios are field errors, and the stored
        // profile stays as it was.
        _ = try client.result("viewModel/close", ["viewModel": .string(form)])
        let account = try client.signUp(email: "legit@example.com")
        #expect(try Self.count(path, "SELECT COUNT(*) FROM account") == 1)
        let stored = try Self.profileRow(path, account.accountId)
        let profile = try client.open("profile")
        try client.waitUntil(profile) { $0["phase"] == "loaded" }
        let refusals = Self.hostileNames.map { ("name", $0) } + Self.hostileEmails.map { ("email", $0) }
            + [("bio", String(repeating: "b", count: 10_000))]
        for (field, value) in refusals {
            try set(profile, "profile/setField", field, value)
            expectFieldError(try client.call("profile/save", ["viewModel": .string(profile)]), field, "profile \(field) \(value.prefix(40).debugDescription)")
            #expect(try client.get(profile).state["errors"]?[field]?.stringValue != nil, "\(field)")
            #expect(try Self.profileRow(path, account.accountId) == stored)
            _ = try client.result("profile/discardChanges", ["viewModel": .string(profile)])
        }
        let profileTypes: [(method: String, params: JSONValue, parameter: String)] = [
            ("profile/setField", ["viewModel": .string(profile), "field": "name", "value": 5], "value"),
            ("profile/setField", ["viewModel": .string(profile), "field": "name", "value": .null], "value"),
            ("profile/setField", ["viewModel": .string(profile), "field": "password", "value": "x"], "field"),
            ("profile/setNotificationsEnabled", ["viewModel": .string(profile), "enabled": "yes"], "enabled"),
            ("profile/setField", ["viewModel": .string(profile), "field": "name", "value": "nul\u{0000}name"], "value"),
            ("profile/setField", ["viewModel": .string(profile), "field": "bio", "value": "nul\u{0000}bio"], "value"),
        ]
        for call in profileTypes {
            let answer = try client.call(call.method, call.params)
            #expect(answer["error"]?["code"] == -32602 && answer["error"]?["data"]?["parameter"] == .string(call.parameter),
                    "\(call.method) \(call.params): \(answer)")
        }
        #expect(try Self.profileRow(path, account.accountId) == stored)
        _ = try client.result("ping")

        // Injection strings are fine names and bios: stored as the text they are, nothing else touched.
        let signedIn = try client.open("login")
        for text in Self.injections {
            try set(profile, "profile/setField", "name", text)
            try set(profile, "profile/setField", "bio", text)
            _ = try client.result("profile/save", ["viewModel": .string(profile)])
            #expect(try Self.profileRow(path, account.accountId) == ProfileRow(name: text, email: stored.email, bio: text), "\(text)")
            #expect(try client.get(signedIn).state["user"]?["name"] == .string(text))
        }
        #expect(try Self.count(path, "SELECT COUNT(*) FROM account") == 1)
        #expect(try Self.count(path, "SELECT COUNT(*) FROM product") > 0)

        // No password in anything the server said, nor in its log.
        _ = try client.result("ping")
        server.closeInput()
        #expect(try server.waitForExit() == 0)
        let said = try #require(client.transcript).map(\.description)
        #expect(said.count > 50)
        for password in Self.passwords {
            let needle = String(password.prefix(24))
            #expect(!said.contains { $0.contains(needle) }, "a password in \(said.first { $0.contains(needle) }?.prefix(300) ?? "")")
            #expect(!server.errorText.contains(needle), "a password in the server's log")
        }
        #expect(server.errorText.contains("debug"), "the log was at debug level: \(server.errorText.prefix(300))")
    }

    /// The profile columns of an account as stored.
    struct ProfileRow: Equatable {
        var name: String
        var email: String
        var bio: String
    }

    static func profileRow(_ path: String, _ id: Int64) throws -> ProfileRow {
        try database(path).read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT name, email, bio FROM account WHERE id = ?", arguments: [id]))
            return ProfileRow(name: row[0], email: row[1], bio: row[2])
        }
    }

    static func count(_ path: String, _ sql: String) throws -> Int {
        try database(path).read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }

    /// The file, read-only.
    static func database(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        return try DatabaseQueue(path: path, configuration: configuration)
    }
}
