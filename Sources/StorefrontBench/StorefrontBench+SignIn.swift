import JSON

extension StorefrontBench {
    /// Sign-in costs, one at a time over pipes, against a `ping` in the same run: registration, a right
    /// password, a wrong password, an unknown email (which must cost what a wrong password does: the time
    /// may not tell which emails have accounts), and resuming a kept token (no hash). Rounds alternate the
    /// three password cases so load drifts hit them alike. Emails rotate over 16 unknown addresses and the
    /// wrong password is sent at most 4 times in a row before a right one clears the count (5 would lock).
    func signingIn(_ path: String) throws -> [Measurement] {
        let folder = try TemporaryFolder()
        let session = try domainSession(path, database: folder.path + "/sign-in.sqlite")
        let start = monotonicNanoseconds()
        let account = try session.signUp(email: "bench@example.com")
        let registered = Double(monotonicNanoseconds() - start) / 1e6
        let (login, _) = try session.open("login")
        let handle = JSONValue.string(login)
        _ = try session.call("login/logout", ["viewModel": handle])
        var right: [Double] = [], wrong: [Double] = [], unknown: [Double] = [], resumed: [Double] = [], pings: [Double] = []
        func timed(_ method: String, _ params: JSONValue) throws -> Double {
            let begin = monotonicNanoseconds()
            _ = try? session.call(method, params)
            return Double(monotonicNanoseconds() - begin) / 1e6
        }
        for round in 0..<Self.signInRounds {
            for _ in 0..<3 { wrong.append(try timed("login/login", ["viewModel": handle, "email": "bench@example.com", "password": "Wrong-password-1"])) }
            for other in 0..<3 {
                unknown.append(try timed("login/login", [
                    "viewModel": handle, "email": .string("nobody\((round * 3 + other) % 16)@example.com"), "password": "Wrong-password-1",
                ]))
            }
            right.append(try timed("login/login", ["viewModel": handle, "email": "bench@example.com", "password": .string(BenchSession.benchPassword)]))
            _ = try session.call("login/logout", ["viewModel": handle])
            pings.append(try timed("ping", [:]))
        }
        // A live token (the registration's was signed out above): each resume is in a new server, as an
        // editor restarting its server does.
        let last = try session.call("login/login", ["viewModel": handle, "email": "bench@example.com", "password": .string(BenchSession.benchPassword)])
        guard let token = last.result["token"]?.stringValue else { throw BenchError(description: "login answered no token") }
        let kept = BenchSession.SignedIn(token: token, accountId: account.accountId)
        for _ in 0..<Self.signInRounds {
            let other = try domainSession(path, database: folder.path + "/sign-in.sqlite")
            let begin = monotonicNanoseconds()
            try other.resume(kept)
            resumed.append(Double(monotonicNanoseconds() - begin) / 1e6)
            _ = try other.child.finish()
        }
        let peak = try session.child.finish()
        let sorted = { (values: [Double]) in values.sorted() }
        let (r, w, u, p) = (sorted(right), sorted(wrong), sorted(unknown), sorted(pings))
        return [Measurement(
            name: "sign-in", framing: .ndjson, runs: 1, count: right.count + wrong.count + unknown.count,
            figures: [
                ("registerMs", registered, "ms"),
                ("rightP50Ms", percentile(50, of: r), "ms"), ("wrongP50Ms", percentile(50, of: w), "ms"),
                ("unknownP50Ms", percentile(50, of: u), "ms"),
                ("unknown/wrong", percentile(50, of: u) / percentile(50, of: w), "x"),
                ("resumeP50Ms", percentile(50, of: resumed.sorted()), "ms (open login, resume, close)"),
                ("pingP50Ms", percentile(50, of: p), "ms"),
            ], peakRSSKiB: peak)]
    }

    /// Rounds of the sign-in measurement (each: 3 wrong, 3 unknown, 1 right, 1 ping).
    static let signInRounds = 12
}
