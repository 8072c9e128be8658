import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL cluster of one test's own, started by `scripts/postgres.sh start` in a new temporary folder
/// and stopped (then removed) in `deinit`: for fault tests that restart or cut the database, which must not
/// disturb the suites sharing the cluster of `STOREFRONT_TEST_POSTGRES_URL`.
///
/// The script runs as a ``ServerProcess`` (posix_spawn, then waitpid), not as a Foundation `Process`:
/// swift-corelibs-foundation learns that a child ended when a socket the child inherited closes, and the
/// PostgreSQL server that `pg_ctl start` leaves running inherits it too, so `waitUntilExit()` would wait
/// for the cluster to stop.
@MainActor
final class ThrowawayCluster {
    /// `scripts/postgres.sh`, found from this file's place in the package.
    nonisolated static let script: String = {
        // <root>/Tests/EndToEndTests/ThrowawayCluster.swift
        var root = #filePath
        for _ in 0..<3 { root = String(root[..<(root.lastIndex(of: "/") ?? root.startIndex)]) }
        return root + "/scripts/postgres.sh"
    }()

    /// The cluster's folder (its data, socket and log; `log` holds the server's messages).
    let folder: TemporaryDirectory
    /// `postgres://storefront@127.0.0.1:PORT/storefront`: the `storefront` database, created empty.
    let url: String
    /// The TCP port it listens on (127.0.0.1).
    let port: Int

    /// Starts a new cluster (initdb, then start: a few seconds).
    init() throws {
        folder = try TemporaryDirectory()
        url = try Self.run(["start", folder.path]).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = URLComponents(string: url)?.port else {
            throw ServerProcessError(description: "scripts/postgres.sh start printed no URL: \(url.debugDescription)")
        }
        self.port = port
    }

    isolated deinit {
        _ = try? Self.run(["stop", folder.path])
    }

    /// ``url`` with `port` instead of the cluster's (a proxy's, say).
    func url(port: Int) -> String {
        var components = URLComponents(string: url)!
        components.port = port
        return components.string!
    }

    /// Starts a fast restart (`scripts/postgres.sh restart`: every connection is closed, the server is down
    /// for a moment, then up again on the same port) and returns at once, while it runs.
    func startRestart() throws -> Restart {
        Restart(try Self.start(["restart", folder.path]))
    }

    /// A restart under way.
    @MainActor
    final class Restart {
        private let script: ServerProcess
        private var status: Int32?

        fileprivate init(_ script: ServerProcess) {
            self.script = script
        }

        /// Whether it still runs (it prints nothing: its stdout closes when it ends).
        var isRunning: Bool {
            guard status == nil else { return false }
            _ = try? script.receiveAvailable(framing: .ndjson, waitingMilliseconds: 0)
            return script.isOutputOpen
        }

        /// Waits for the end and fails unless the cluster is up again.
        func finish() throws {
            if status == nil { status = try script.waitForExit() }
            guard status == 0 else {
                throw ServerProcessError(description: "scripts/postgres.sh restart failed (\(status!)): \(script.errorText.suffix(2_000))")
            }
        }
    }

    /// The end of the cluster's own log, for failure messages.
    func logTail(lines: Int = 30) -> String {
        let text = (try? String(contentsOfFile: folder.path + "/log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    /// Runs `scripts/postgres.sh ARGUMENTS` to its end and returns its stdout; a failure throws with its stderr.
    private static func run(_ arguments: [String]) throws -> String {
        let script = try start(arguments)
        let output = try script.outputText()
        let status = try script.waitForExit()
        guard status == 0 else {
            throw ServerProcessError(description: """
                scripts/postgres.sh \(arguments.joined(separator: " ")) failed (\(status)): \(script.errorText.suffix(2_000))
                """)
        }
        return output
    }

    /// The script running with `arguments` (2 minutes to end: initdb on a loaded machine is slow).
    private static func start(_ arguments: [String]) throws -> ServerProcess {
        let script = try ServerProcess(command: ["/bin/bash", Self.script] + arguments, timeoutSeconds: 120)
        script.closeInput()
        return script
    }
}
