import JSON
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The server ends with its client, whichever way the client goes, and leaves no process behind.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct LifecycleTests {
    /// A shell that starts the server in the background on the shell's own stdin, prints the server's
    /// pid as the first line of stdout, and waits: `$0` is the executable, `$1` the database.
    /// (A background job's stdin would be /dev/null without the explicit redirection.)
    static let shellScript = #"exec 3<&0; "$0" serve --framing ndjson --database "$1" <&3 3<&- & echo $!; wait"#

    @Test func exitsWithZeroWhenStdinClosesWithAnActionInFlight() throws {
        let server = try ServerProcess(["--framing", "ndjson", "--database", ":memory:"])
        let client = MirroringClient(server)
        try client.initialize()
        let cart = try client.open("cart")
        let ids = try client.send([("cart/add", ["viewModel": .string(cart), "productId": "p-0001", "quantity": 1])])
        server.closeInput()
        #expect(try client.response(to: ids[0])["result"]?["version"] != nil)
        #expect(try server.waitForExit() == 0)
    }

    @Test(arguments: [false, true])
    func exitsWhenTheProcessThatStartedItIsKilled(inANewSession: Bool) throws {
        let executable = try #require(ServerProcess.executablePath)
        let folder = try TemporaryDirectory()
        let database = folder.path + "/shop.sqlite"
        var command = ["/bin/sh", "-c", Self.shellScript, executable, database]
        if inANewSession {
            let candidates: [String] = ["/usr/bin/setsid", "/bin/setsid"]
            let setsid = try #require(candidates.first { access($0, X_OK) == 0 }, "setsid is installed")
            command.insert(setsid, at: 0)
        }
        let shell = try ServerProcess(command: command, timeoutSeconds: 30)
        let serverPID = try #require(shell.receive(framing: .ndjson).integerValue.map { pid_t($0) })
        #expect(Self.isRunning(serverPID))
        // Once it answers, it is past its start-up (where it asks to hear of its parent's death).
        try shell.send([#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#], framing: .ndjson)
        #expect(try shell.receive(framing: .ndjson)["result"] == [:])

        // The shell dies without closing the server's stdin: the test still holds the write end.
        shell.sendSignal(SIGKILL)
        #expect(try Self.waitUntilGone(serverPID, within: 30_000), "the server outlived the process that started it")
        #expect(try shell.killAndWait() == 128 + SIGKILL)
        #expect(Self.processes(mentioning: database).isEmpty, "no process is left on the test's database")
    }

    @Test func outlivesTheThreadThatStartedItWhileTheClientLives() throws {
        let executable = try #require(ServerProcess.executablePath)
        let worker = try WorkerThread()
        let server = try ServerProcess(command: [executable, "serve", "--framing", "ndjson", "--database", ":memory:"], spawningOn: worker)
        try server.send([#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#], framing: .ndjson)
        #expect(try server.receive(framing: .ndjson)["id"] == 1)
        // The server is up (and has asked to hear of its parent's death); now the spawning thread ends,
        // as a client's worker thread does, while the client process goes on.
        worker.end()
        try server.send([#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#], framing: .ndjson)
        #expect(try server.receive(framing: .ndjson)["id"] == 2)
        server.closeInput()
        #expect(try server.waitForExit() == 0, "stderr: \(server.errorText)")
    }

    // MARK: Processes that are not the test's children

    /// Whether `pid` is a live process (a zombie that nobody reaped counts as gone).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)...].first
        return state != "Z" && state != "X"
    }

    /// Polls until `pid` is gone or `milliseconds` have passed; returns whether it is gone.
    static func waitUntilGone(_ pid: pid_t, within milliseconds: Int) throws -> Bool {
        for _ in 0..<milliseconds {
            if !isRunning(pid) { return true }
            poll(nil, 0, 1)
        }
        return !isRunning(pid)
    }

    /// Live processes whose command line contains `text`.
    static func processes(mentioning text: String) -> [pid_t] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var found: [pid_t] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = pid_t(name), isRunning(pid),
                  let commandLine = read("/proc/\(pid)/cmdline") else { continue }
            if commandLine.contains(text) { found.append(pid) }
        }
        return found
    }

    private static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
