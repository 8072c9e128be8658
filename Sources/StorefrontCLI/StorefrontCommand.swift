import ArgumentParser
import StorefrontServer

/// `storefront`: the headless shop server and its tools.
@main
struct StorefrontCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storefront",
        abstract: "A headless app server: the shop's ViewModels over JSON-RPC 2.0 on stdin/stdout.",
        version: StorefrontVersion.current,
        subcommands: [ServeCommand.self, SeedCommand.self, RecountCommand.self, OpenRPCCommand.self],
        defaultSubcommand: nil
    )
}
