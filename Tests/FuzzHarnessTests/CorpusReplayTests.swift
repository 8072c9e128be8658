import Foundation
import Testing

/// Every committed fuzz input (the seed corpus and each crash the fuzzer found) replayed through the
/// harness, in a `storefront-fuzz` child process: the harness takes over the main queue and Swift's global
/// executor, which it must not do inside the test runner, and an input that still crashes fails its test
/// instead of the whole run.
@Suite struct CorpusReplayTests {
    /// `Tests/FuzzCorpus`.
    static let corpusFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FuzzCorpus")

    /// The committed inputs, as `seeds/<name>` and `crashes/<name>`.
    static let inputs: [String] = ["seeds", "crashes"].flatMap { folder in
        let names = (try? FileManager.default.contentsOfDirectory(atPath: corpusFolder.appendingPathComponent(folder).path)) ?? []
        return names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted().map { "\(folder)/\($0)" }
    }

    /// The replayer built next to this test bundle (or in the package's `.build/debug`).
    static let replayer: String? = {
        var folders: [URL] = []
        if let bundle = Bundle.main.executableURL { folders.append(bundle.deletingLastPathComponent()) }
        folders.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        folders.append(corpusFolder.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/debug"))
        return folders.map { $0.appendingPathComponent("storefront-fuzz").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    @Test func theCorpusHasSeedsInBothFramings() {
        #expect(Self.inputs.contains { $0.hasPrefix("seeds/") && $0.hasSuffix(".ndjson") })
        #expect(Self.inputs.contains { $0.hasPrefix("seeds/") && $0.hasSuffix(".lsp") })
    }

    @Test(arguments: inputs)
    func replayingKeepsEveryInvariant(_ input: String) throws {
        let path = try #require(Self.replayer, "storefront-fuzz is not built; run swift build --build-tests")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [Self.corpusFolder.appendingPathComponent(input).path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let report = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(input):\n\(report)")
    }
}
