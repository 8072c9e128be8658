import ArgumentParser

/// `storefront`: the headless shop server and its tools.
@main
struct StorefrontCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storefront",
        abstract: "A headless app server: the shop's ViewModels over JSON-RPC 2.0 on stdin/stdout.",
        version: StorefrontVersion.current,
        subcommands: [ServeCommand.self, SeedCommand.self, OpenRPCCommand.self],
        defaultSubcommand: nil
    )
}

/// The version reported by `--version` and in `serverInfo`.
enum StorefrontVersion {
    static let current = "0.1.0"
    /// The wire protocol's version (`protocolVersion` in the `initialize` result).
    static let protocolVersion = "2026-11-21"
}
