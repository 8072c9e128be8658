import ArgumentParser
import Foundation
import JSON
import StorefrontServer

/// `storefront openrpc`: prints the OpenRPC document that `rpc.discover` serves, or writes it and the state
/// schemas into a protocol folder. Both are derived from the code; no database is opened.
struct OpenRPCCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openrpc",
        abstract: "Print the OpenRPC document of the protocol (the one rpc.discover returns).",
        discussion: "With --write DIR, write DIR/openrpc.json and DIR/schemas/<State>.json instead (the committed protocol/ folder).")

    @Option(name: .customLong("write"), help: "A protocol folder to write openrpc.json and schemas/*.json into.")
    var folder: String?

    func run() throws {
        let documents = MainActor.assumeIsolated { ServerAssembly.protocolDocuments() }
        guard let folder else {
            print(documents.openRPC.prettyPrinted())
            return
        }
        let schemas = URL(fileURLWithPath: folder).appendingPathComponent("schemas")
        try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
        try Data((documents.openRPC.prettyPrinted() + "\n").utf8).write(to: URL(fileURLWithPath: folder).appendingPathComponent("openrpc.json"))
        for (name, schema) in documents.stateSchemas {
            try Data((schema.prettyPrinted() + "\n").utf8).write(to: schemas.appendingPathComponent("\(name).json"))
        }
    }
}
