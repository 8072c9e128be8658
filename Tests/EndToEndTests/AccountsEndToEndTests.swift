import GRDB
import JSON
import Randomness
import Testing

/// Accounts over real pipes, with several servers on one database file: one account's sessions in two
/// servers show one cart and one profile, and a sign-out in one ends both; a kept token survives a server
/// restart; no account sees or changes another's cart, and forged or ended tokens are refused; a guest
/// cart merged at sign-in is capped and says so; five wrong passwords lock sign-ins in every server.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct AccountsEndToEndTests {
    func started(_ path: String) throws -> (ServerProcess, MirroringClient) {
        let server = try ServerProcess(["--database", path, "--framing", "ndjson"], timeoutSeconds: 60)
        let client = MirroringClient(server)
        try client.initialize()
        return (server, client)
    }

    func loaded(_ client: MirroringClient, _ type: String, args: JSONValue = [:]) throws -> String {
        let handle = try client.open(type, args: args)
        try client.waitUntil(handle) { $0["phase"] == "loaded" }
        return handle
    }

    func reason(of answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    /// `login/resume` with `token` (any JSON) on a new `login` ViewModel; the whole answer.
    func resumeAnswer(_ client: MirroringClient, token: JSONValue) throws -> JSONValue {
        let login = try client.open("login")
        return try client.call("login/resume", ["viewModel": .string(login), "token": token])
    }

    @Test func twoServersOfOneAccountShowOneCartAndOneProfileAndASignOutInOneEndsBoth() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (_, a) = try started(path)
        let (_, b) = try started(path)
        let account = try a.signUp(email: "one@example.com")
        try b.resume(account)
        let (loginA, loginB) = (try a.open("login"), try b.open("login"))
        let (cartA, cartB) = (try loaded(a, "cart"), try loaded(b, "cart"))

        // Adds in both servers, pipelined in both before either answer is read: one cart.
        let catalog = try StoredShop.read(path: path, owner: account.owner)
        let pool = catalog.stock.keys.sorted().filter { catalog.stock[$0]! >= 30 && catalog.maxPerOrder[$0]! >= 5 }.prefix(3)
        try #require(pool.count == 3, "the demo catalog has products with stock")
        let (x, y, z) = (JSONValue.string(pool[pool.startIndex]), JSONValue.string(pool[pool.startIndex + 1]), JSONValue.string(pool[pool.startIndex + 2]))
        let sentA = try a.send([
            ("cart/add", ["viewModel": .string(cartA), "productId": x, "quantity": 2]),
            ("cart/add", ["viewModel": .string(cartA), "productId": y, "quantity": 1]),
        ])
        let sentB = try b.send([
            ("cart/add", ["viewModel": .string(cartB), "productId": y, "quantity": 1]),
            ("cart/add", ["viewModel": .string(cartB), "productId": z, "quantity": 3]),
        ])
        for id in sentA {
            let answer = try a.response(to: id)
            #expect(answer["result"] != nil, "A: \(answer); A's cart shows \(a.mirrors[cartA]?.state ?? .null)")
        }
        for id in sentB {
            let answer = try b.response(to: id)
            #expect(answer["result"] != nil, "B: \(answer); B's cart shows \(b.mirrors[cartB]?.state ?? .null)")
        }
        let stored = try StoredShop.read(path: path, owner: account.owner)
        #expect(stored.cart == [x.stringValue!: 2, y.stringValue!: 2, z.stringValue!: 3])
        for (client, cart) in [(a, cartA), (b, cartB)] {
            // Bounded by the client's 60 s wait for a message: a guard against a hang, not a figure.
            try client.waitUntil(cart) { StoredShop.cartLines(of: $0) == stored.cartLines }
            let current = try client.get(cart)
            #expect(current.state == client.mirrors[cart]?.state && current.version == client.mirrors[cart]?.version)
        }
        #expect(a.mirrors[cartA]?.state["totals"] == b.mirrors[cartB]?.state["totals"])

        // A profile saved in A is who B's session shows.
        let profile = try loaded(a, "profile")
        _ = try a.result("profile/setField", ["viewModel": .string(profile), "field": "name", "value": "Ada Lovelace"])
        _ = try a.result("profile/save", ["viewModel": .string(profile)])
        try b.waitUntil(loginB) { $0["user"]?["name"] == "Ada Lovelace" }
        #expect(b.mirrors[loginB]?.state["user"] == ["id": .integer(account.accountId), "email": "one@example.com", "name": "Ada Lovelace"])

        // Signing out in B ends the session in A too: a guest with an empty cart, told why.
        _ = try b.result("login/logout", ["viewModel": .string(loginB)])
        try a.waitUntil(loginA) { $0["phase"] == "loggedOut" }
        let signedOut = try #require(a.mirrors[loginA]?.state)
        #expect(signedOut["user"] == .null)
        #expect(signedOut["message"]?.stringValue?.contains("signed out") == true, "\(signedOut)")
        try a.waitUntil(cartA) { $0["lines"] == [] }
        #expect(try a.get(cartA).state["totals"]?["itemCount"] == 0)
        #expect(try b.get(cartB).state["lines"] == [])
        try a.waitUntil(profile) { $0["phase"] == "failed" }
        #expect(a.mirrors[profile]?.state["error"]?["message"] == "Sign in to see your profile.", "\(a.mirrors[profile]?.state ?? .null)")
        #expect(a.mirrors[profile]?.state["accountId"] == .null && a.mirrors[profile]?.state["fields"]?["name"] == "")
        let checkout = try a.call("cart/checkout", ["viewModel": .string(cartA)])
        #expect(reason(of: checkout) == "signInRequired", "\(checkout)")
        // The account keeps its cart for its next sign-in.
        #expect(try StoredShop.read(path: path, owner: account.owner).cartLines == stored.cartLines)

        // The token no longer resumes anywhere.
        let (_, c) = try started(path)
        let refused = try resumeAnswer(c, token: .string(account.token))
        #expect(refused["error"]?["code"] == -32001 && reason(of: refused) == "sessionInvalid", "\(refused)")
    }

    @Test func aTokenKeptAcrossAServerRestartResumesTheSameAccountAndCart() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (first, a) = try started(path)
        let account = try a.signUp(email: "editor@example.com")
        let cart = try loaded(a, "cart")
        _ = try a.result("cart/add", ["viewModel": .string(cart), "productId": "p-0003", "quantity": 2])
        _ = try a.result("cart/add", ["viewModel": .string(cart), "productId": "p-0005", "quantity": 1])
        let shown = try #require(a.mirrors[cart]?.state)
        // The editor's server dies (or restarts); the editor kept only the token.
        _ = try first.killAndWait()

        let (_, restarted) = try started(path)
        let login = try restarted.open("login")
        let resumed = try restarted.result("login/resume", ["viewModel": .string(login), "token": .string(account.token)])
        #expect(resumed["accountId"] == .integer(account.accountId))
        #expect(resumed["token"] == .string(account.token))
        let state = try restarted.get(login).state
        #expect(state["phase"] == "loggedIn")
        #expect(state["user"]?["id"] == .integer(account.accountId) && state["user"]?["email"] == "editor@example.com")
        let again = try loaded(restarted, "cart")
        #expect(restarted.mirrors[again]?.state["lines"] == shown["lines"])
        #expect(restarted.mirrors[again]?.state["totals"] == shown["totals"])
        #expect(try StoredShop.read(path: path, owner: account.owner).cartLines == StoredShop.cartLines(of: shown))
    }

    @Test func noAccountSeesOrChangesAnothersCartAndForgedOrEndedTokensAreRefused() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (_, a) = try started(path)
        let (_, b) = try started(path)
        let first = try a.signUp(email: "first@example.com")
        let second = try b.signUp(email: "second@example.com")
        #expect(first.accountId != second.accountId)
        let (cartA, cartB) = (try loaded(a, "cart"), try loaded(b, "cart"))
        _ = try a.result("cart/add", ["viewModel": .string(cartA), "productId": "p-0001", "quantity": 2, "idempotencyKey": "mine-1"])
        let before = try a.get(cartA)

        // B names A's product in every cart action that needs a line: none finds one.
        for (method, extra) in [("cart/remove", [:]), ("cart/setQuantity", ["quantity": 5]), ("cart/setQuantity", ["quantity": 0])] as [(String, [String: JSONValue])] {
            let answer = try b.call(method, .object(["viewModel": .string(cartB), "productId": "p-0001"].merging(extra) { $1 }))
            #expect(answer["error"]?["code"] == -32001 && reason(of: answer) == "notInCart", "\(method): \(answer)")
        }
        // A's key, resent by B with the same params, is not answered with A's outcome.
        let reused = try b.call("cart/add", ["viewModel": .string(cartB), "productId": "p-0001", "quantity": 2, "idempotencyKey": "mine-1"])
        #expect(reason(of: reused) == "idempotencyKeyReused", "\(reused)")
        let detailB = try loaded(b, "productDetail", args: ["productId": "p-0001"])
        #expect(b.mirrors[detailB]?.state["inCart"] == 0)
        #expect(try b.get(cartB).state["lines"] == [])
        // A's cart: not a notification, not a unit changed.
        let after = try a.get(cartA)
        #expect(after.version == before.version && after.state == before.state)
        #expect(try StoredShop.read(path: path, owner: first.owner).cartLines == [.init(productId: "p-0001", quantity: 2)])
        #expect(try StoredShop.read(path: path, owner: second.owner).cartLines == [])

        // A signs out; B (signed out too) cannot take A's ended session.
        let loginA = try a.open("login")
        _ = try a.result("login/logout", ["viewModel": .string(loginA)])
        let loginB = try b.open("login")
        _ = try b.result("login/logout", ["viewModel": .string(loginB)])
        let ended = try b.call("login/resume", ["viewModel": .string(loginB), "token": .string(first.token)])
        #expect(ended["error"]?["code"] == -32001 && reason(of: ended) == "sessionInvalid", "\(ended)")

        // Forged tokens of the right shape, and tokens of no shape at all.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var random = SeededRandom(seed: 14)
        let forged = "sft_" + String((0..<43).map { _ in alphabet.randomElement(using: &random)! })
        let body = Array(first.token.dropFirst(4))
        let flipped = "sft_" + String(body[0] == "A" ? "B" : "A") + String(body.dropFirst())
        let garbage = [
            forged, flipped, "", "sft_", "sft_" + String(repeating: "A", count: 42), "sft_" + String(repeating: "A", count: 44),
            "sft_" + String(repeating: "+", count: 43), "SFT_" + first.token.dropFirst(4), " " + first.token, first.token + "\n",
            "Bearer " + first.token, String(repeating: "sft_", count: 2_500), "' OR 1=1 --",
        ]
        for token in garbage {
            let answer = try b.call("login/resume", ["viewModel": .string(loginB), "token": .string(token)])
            #expect(answer["error"]?["code"] == -32001 && reason(of: answer) == "sessionInvalid", "\(token.prefix(60).debugDescription): \(answer)")
        }
        // Text holding U+0000 is refused as params before any lookup.
        let withNUL = try b.call("login/resume", ["viewModel": .string(loginB), "token": .string("sft_\u{0000}" + String(repeating: "A", count: 42))])
        #expect(withNUL["error"]?["code"] == -32602 && withNUL["error"]?["data"]?["parameter"] == "token", "\(withNUL)")
        #expect(try b.get(loginB).state["user"] == .null)

        // A guest can neither check out nor see a profile.
        _ = try b.result("cart/add", ["viewModel": .string(cartB), "productId": "p-0002", "quantity": 1])
        let ordersBefore = try StoredShop.read(path: path, owner: second.owner).orders.count
        let checkout = try b.call("cart/checkout", ["viewModel": .string(cartB)])
        #expect(checkout["error"]?["code"] == -32001 && reason(of: checkout) == "signInRequired", "\(checkout)")
        #expect(try StoredShop.read(path: path, owner: second.owner).orders.count == ordersBefore)
        let profile = try b.call("viewModel/open", ["type": "profile"])
        #expect(profile["error"]?["code"] == -32001 && reason(of: profile) == "signInRequired", "\(profile)")
        _ = try b.result("ping")
    }

    /// A server on a new file, an account signed up there, a product whose limit (the per-order maximum or the
    /// stock) leaves room to overflow it, and another with at least `otherStock` in stock.
    func overflowableShop(email: String, otherStock: Int) throws
        -> (folder: TemporaryDirectory, path: String, client: MirroringClient, account: SignedInAccount, stored: StoredShop, product: String, other: String) {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (_, client) = try started(path)
        let account = try client.signUp(email: email)
        let stored = try StoredShop.read(path: path, owner: account.owner)
        let product = try #require(stored.stock.keys.sorted().first { min(stored.stock[$0]!, stored.maxPerOrder[$0]!) >= 3 })
        let other = try #require(stored.stock.keys.sorted().first { $0 != product && stored.stock[$0]! >= otherStock })
        return (folder, path, client, account, stored, product, other)
    }

    @Test func aGuestCartMergedIntoAnAccountIsCappedAndTheCartSaysSo() throws {
        let (folder, path, a, account, stored, product, other) = try overflowableShop(email: "merge@example.com", otherStock: 1)
        defer { withExtendedLifetime(folder) {} }
        let detail = try loaded(a, "productDetail", args: ["productId": .string(product)])
        let detailState = try #require(a.mirrors[detail]?.state)
        let limit = try #require(detailState["maxQuantity"]?.integerValue)
        #expect(limit == Int64(min(stored.stock[product]!, stored.maxPerOrder[product]!)))
        let cartA = try loaded(a, "cart")
        _ = try a.result("cart/add", ["viewModel": .string(cartA), "productId": .string(product), "quantity": .integer(limit - 1)])

        // A guest in another server takes two more, which the account cannot hold, and one of another product.
        let (_, b) = try started(path)
        let cartB = try loaded(b, "cart")
        _ = try b.result("cart/add", ["viewModel": .string(cartB), "productId": .string(product), "quantity": 2])
        _ = try b.result("cart/add", ["viewModel": .string(cartB), "productId": .string(other), "quantity": 1])
        let login = try b.open("login")
        _ = try b.result("login/login", ["viewModel": .string(login), "email": "merge@example.com", "password": .string(MirroringClient.testPassword)])

        let name = try #require(detailState["product"]?["name"])
        #expect(b.mirrors[login]?.state["cappedLines"] == [
            ["productId": .string(product), "name": name, "requested": .integer(limit + 1), "kept": .integer(limit)],
        ])
        let merged = try #require(b.mirrors[cartB]?.state)
        #expect(StoredShop.cartLines(of: merged) == [.init(productId: product, quantity: Int(limit)), .init(productId: other, quantity: 1)])
        let notices = try #require(merged["notices"]?.arrayValue)
        #expect(notices.count == 1 && notices.first?["productId"] == .string(product) && notices.first?["reason"] == "quantityCapped",
                "\(notices)")
        let file = try StoredShop.read(path: path, owner: account.owner)
        #expect(file.cartLines == StoredShop.cartLines(of: merged))
        #expect(try Self.count(path, "SELECT COUNT(*) FROM cart_line WHERE owner LIKE 'g:%'") == 0, "the guest's lines moved, none stayed")
        // The account's other session shows the merged cart too.
        try a.waitUntil(cartA) { StoredShop.cartLines(of: $0) == file.cartLines }
        #expect(try a.get(cartA).state["lines"] == merged["lines"])
    }

    @Test func fiveWrongPasswordsLockSignInsForTheEmailInEveryServer() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (_, a) = try started(path)
        let (_, b) = try started(path)
        _ = try a.signUp(email: "locked@example.com")
        let loginA = try a.open("login")
        _ = try a.result("login/logout", ["viewModel": .string(loginA)])

        // A wrong password and an unknown email are answered alike.
        let unknown = try a.call("login/login", ["viewModel": .string(loginA), "email": "nobody@example.com", "password": "Wrong-pw-1"])
        var answers: [JSONValue] = []
        for attempt in 1...5 {
            answers.append(try a.call("login/login", ["viewModel": .string(loginA), "email": "locked@example.com", "password": .string("Wrong-pw-\(attempt)")]))
        }
        #expect(answers[0]["error"] == unknown["error"], "\(answers[0]) / \(unknown)")
        for answer in answers.prefix(4) {
            #expect(answer["error"]?["code"] == -32001 && reason(of: answer) == "invalidCredentials", "\(answer)")
        }
        let locked = answers[4]
        #expect(locked["error"]?["code"] == -32001 && reason(of: locked) == "signInLocked", "\(locked)")
        let retryAfter = locked["error"]?["data"]?["details"]?["retryAfter"]?.stringValue.flatMap { Int($0) }
        // The first lock lasts a minute from the 5th failure. (61 also comes: the failure's time is stored
        // rounded to the millisecond, and the seconds left are rounded up.)
        #expect(retryAfter.map { (60...61).contains($0) } == true, "\(locked)")
        let state = try a.get(loginA).state
        #expect(state["phase"] == "failed" && state["user"] == .null)
        #expect(state["lockedUntil"]?.stringValue != nil, "\(state)")
        #expect(state["lockedUntil"] == locked["error"]?["data"]?["details"]?["lockedUntil"])

        // The right password is refused while locked, here and in the other server on the file.
        let right: JSONValue = ["email": "locked@example.com", "password": .string(MirroringClient.testPassword)]
        let loginB = try b.open("login")
        for (client, login) in [(a, loginA), (b, loginB)] {
            let answer = try client.call("login/login", .object(right.objectValue!.merging(["viewModel": .string(login)]) { $1 }))
            #expect(reason(of: answer) == "signInLocked", "\(answer)")
            #expect(try client.get(login).state["user"] == .null)
        }
    }

    /// Sign-ins sent at once, each on a login ViewModel of its own (one client, one pipe): 59 wrong passwords,
    /// then the right one. Five failures lock the email, so the right password, sent after 59 wrong ones,
    /// must not sign in. Known to fail: each attempt checks the lock before its hash and records its failure
    /// after it, so attempts in flight together all pass the check, and the success then clears the
    /// failures. (`isIntermittent`: which attempts pass the check depends on when the hashes end.)
    @Test func signInsSentTogetherCannotGuessPastTheLock() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/shop.sqlite"
        let (_, client) = try started(path)
        _ = try client.signUp(email: "guessed@example.com")
        let first = try client.open("login")
        _ = try client.result("login/logout", ["viewModel": .string(first)])
        let logins = try (0..<60).map { _ in try client.open("login") }
        let ids = try client.send(logins.enumerated().map { index, login in
            let password = index == logins.count - 1 ? MirroringClient.testPassword : "Wrong-guess-\(index)"
            return ("login/login", ["viewModel": .string(login), "email": "guessed@example.com", "password": .string(password)])
        })
        let answers = try ids.map { try client.response(to: $0) }
        let reasons = answers.map { reason(of: $0) ?? "signed in" }
        #expect(reasons.filter { $0 == "invalidCredentials" }.count <= 5, "\(reasons)")
        let failures = try Self.count(path, "SELECT COUNT(*) FROM sign_in_failure")
        // Each attempt is counted before its password is checked, in the transaction that checks the lock.
        #expect(reason(of: answers.last!) == "signInLocked", "the right password after 59 wrong ones: \(answers.last!)")
        #expect(failures == 5, "the failures stored once every attempt was answered")
    }

    /// One integer a query of the database file answers (read-only).
    static func count(_ path: String, _ sql: String) throws -> Int {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        return try DatabaseQueue(path: path, configuration: configuration).read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }

    /// Right after an answer, before any `viewModel/get`: each mirror equals the server's state.
    func expectMirrorsCurrent(_ client: MirroringClient, _ handles: [String], _ step: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let mirrors = handles.map { client.mirrors[$0] }
        for (handle, mirror) in zip(handles, mirrors) {
            let got = try client.get(handle)
            #expect(mirror?.state == got.state && mirror?.version == got.version,
                    "\(step): \(handle) mirror \(String(describing: mirror)) vs get \(got)", sourceLocation: sourceLocation)
        }
    }

    func notices(_ client: MirroringClient, _ handle: String) -> Int? { client.mirrors[handle]?.state["notices"]?.arrayValue?.count }

    /// The cart's notices of lines capped at sign-in (the session's, which the cart watches itself: the binding
    /// does not observe its reads) reach every open cart with the answer of the action that changed them.
    @Test func cappedNoticesFollowEveryActionOnEveryCart() throws {
        let (folder, path, a, _, stored, product, other) = try overflowableShop(email: "capped@example.com", otherStock: 2)
        defer { withExtendedLifetime(folder) {} }
        let limit = Int64(min(stored.stock[product]!, stored.maxPerOrder[product]!))
        let cartA = try loaded(a, "cart")
        _ = try a.result("cart/add", ["viewModel": .string(cartA), "productId": .string(product), "quantity": .integer(limit - 1)])

        // One session throughout (the first cart's watch is re-armed), two sign-ins.
        let (_, b) = try started(path)
        // Two carts share the session: one opened before the sign-ins, one after each.
        let cart1 = try loaded(b, "cart")
        for round in 0..<2 {
            _ = try b.result("cart/add", ["viewModel": .string(cart1), "productId": .string(product), "quantity": 2])
            let login = try b.open("login")
            _ = try b.result("login/login", ["viewModel": .string(login), "email": "capped@example.com", "password": .string(MirroringClient.testPassword)])
            try expectMirrorsCurrent(b, [cart1], "round \(round) after login")
            #expect(notices(b, cart1) == 1)
            let cart2 = try loaded(b, "cart")
            #expect(notices(b, cart2) == 1)
            try expectMirrorsCurrent(b, [cart1, cart2], "round \(round) second cart")

            if round == 0 {
                // Dismissed on the cart opened after the sign-in: the other cart's notice goes too.
                _ = try b.result("cart/dismissNotices", ["viewModel": .string(cart2)])
                let mirrors = [cart1, cart2].map { b.mirrors[$0]?.state["notices"] }
                #expect(mirrors == [[], []], "notices right after dismissNotices: \(mirrors)")
                try expectMirrorsCurrent(b, [cart1, cart2], "after dismissNotices")
            } else {
                // A change on the first cart clears the notice on both.
                _ = try b.result("cart/add", ["viewModel": .string(cart1), "productId": .string(other), "quantity": 1])
                let mirrors = [cart1, cart2].map { b.mirrors[$0]?.state["notices"] }
                #expect(mirrors == [[], []], "notices right after a change: \(mirrors)")
                try expectMirrorsCurrent(b, [cart1, cart2], "after a change")
            }
            // Back to a guest, the cart reset; signed in again elsewhere for the next round.
            _ = try b.result("login/logout", ["viewModel": .string(login)])
            try expectMirrorsCurrent(b, [cart1, cart2], "round \(round) after logout")
            _ = try b.result("viewModel/close", ["viewModel": .string(cart2)])
            _ = try b.result("ping")
            _ = try a.result("cart/setQuantity", ["viewModel": .string(cartA), "productId": .string(product), "quantity": .integer(limit - 1)])
        }
    }
}
