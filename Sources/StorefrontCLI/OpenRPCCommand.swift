import ArgumentParser
import JSONRPC
import Logging
import Shop
import ShopStore
import StorefrontServer

/// `storefront openrpc`: prints the OpenRPC document that `rpc.discover` serves.
struct OpenRPCCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openrpc",
        abstract: "Print the OpenRPC document of the protocol (the one rpc.discover returns).")

    func run() throws {
        let database = try ShopDatabase(path: ":memory:")
        let document = MainActor.assumeIsolated {
            let clock = ContinuousClock()
            let assembly = ServerAssembly(
                services: ShopServices.live(database: database, clock: clock), clock: clock, outbox: Outbox(),
                logger: Logger(label: "storefront"))
            return assembly.connection.openRPCDocument()
        }
        print(document.prettyPrinted())
    }
}
