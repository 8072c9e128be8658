import Foundation
import JSON
import StorefrontServer
import Testing

/// The committed protocol/ folder is what the code derives: `protocol/openrpc.json` is what `rpc.discover`
/// serves and `protocol/schemas/*.json` are the states' schemas. Regenerate both with
/// `swift run storefront openrpc --write protocol`.
@MainActor @Suite struct ProtocolFilesTests {
    /// The repository's protocol/ folder, found from this file's path.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("protocol")

    static let regenerate = "regenerate with: swift run storefront openrpc --write protocol"

    func committed(_ path: String) throws -> JSONValue {
        try JSONValue(parsing: Array(Data(contentsOf: Self.folder.appendingPathComponent(path))))
    }

    @Test func theOpenRPCDocumentIsWhatTheServerServes() throws {
        let documents = ServerAssembly.protocolDocuments()
        #expect(try committed("openrpc.json") == documents.openRPC, "protocol/openrpc.json is stale; \(Self.regenerate)")
    }

    @Test func theStateSchemasAreDerivedFromTheStateTypes() throws {
        let documents = ServerAssembly.protocolDocuments()
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.appendingPathComponent("schemas").path)
            .filter { $0.hasSuffix(".json") }
        #expect(Set(files) == Set(documents.stateSchemas.keys.map { "\($0).json" }), "\(Self.regenerate)")
        for (name, schema) in documents.stateSchemas {
            #expect(try committed("schemas/\(name).json") == schema, "protocol/schemas/\(name).json is stale; \(Self.regenerate)")
        }
    }

    @Test func theDocumentsCiteOnlyDefinitionsTheyHave() throws {
        let documents = ServerAssembly.protocolDocuments()
        let components = try #require(documents.openRPC["components"]?["schemas"]?.objectValue)
        for reference in Self.references(in: documents.openRPC) where reference.hasPrefix("#/components/schemas/") {
            let name = reference.dropFirst("#/components/schemas/".count).split(separator: "/").first.map(String.init) ?? ""
            #expect(components[name] != nil, "\(reference)")
        }
        for (name, schema) in documents.stateSchemas {
            let definitions = schema["$defs"]?.objectValue ?? [:]
            for reference in Self.references(in: schema) {
                #expect(reference.hasPrefix("#/$defs/") && definitions[String(reference.dropFirst("#/$defs/".count))] != nil,
                        "\(name): \(reference)")
            }
        }
    }

    static func references(in value: JSONValue) -> [String] {
        switch value {
        case .object(let members):
            (members["$ref"]?.stringValue.map { [$0] } ?? []) + members.values.flatMap(references(in:))
        case .array(let elements):
            elements.flatMap(references(in:))
        default:
            []
        }
    }
}
