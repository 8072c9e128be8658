import ArgumentParser
import CProcessControl
import JSONRPC
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `storefront serve`: the JSON-RPC server on stdin/stdout.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve JSON-RPC 2.0 on stdin/stdout until the client exits or closes stdin.",
        discussion: "stdout carries protocol bytes only; logs go to stderr."
    )

    @Option(help: "Message framing: auto (decide from the first bytes), ndjson (one message per line) or lsp (Content-Length headers).")
    var framing: FramingChoice = .auto

    @Option(help: "Least severe log level written to stderr: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .notice

    @Option(help: "Largest message accepted, in bytes; a larger one is skipped and answered with an error.")
    var maxMessageBytes: Int = 16 * 1024 * 1024

    func validate() throws {
        guard maxMessageBytes >= 64 else { throw ValidationError("--max-message-bytes must be at least 64") }
    }

    func run() throws {
        // From here on, fd 1 is stderr: stray print() calls cannot corrupt the protocol stream.
        let wire = dup(STDOUT_FILENO)
        dup2(STDERR_FILENO, STDOUT_FILENO)
        // Exit when the parent dies, even if it left our stdin open.
        _ = pc_signal_when_parent_dies(SIGTERM)

        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "storefront")
        var transportConfiguration = StdioTransport.Configuration()
        transportConfiguration.framing = framing
        transportConfiguration.maxMessageBytes = maxMessageBytes

        let code = MainActor.assumeIsolated {
            let outbox = Outbox()
            let connection = Connection(
                identity: ServerIdentity(
                    name: "storefront", version: StorefrontVersion.current,
                    protocolVersion: StorefrontVersion.protocolVersion),
                outbox: outbox, logger: logger)
            let transport = StdioTransport(
                input: STDIN_FILENO, output: wire, configuration: transportConfiguration, logger: logger)
            return transport.run(connection)
        }
        Glibc.exit(code)
    }
}

extension FramingChoice: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}
