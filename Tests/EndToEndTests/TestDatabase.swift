import Foundation

/// Where an end-to-end test's servers keep their shop: a new SQLite file, or a new database on the throwaway
/// PostgreSQL cluster named by `STOREFRONT_TEST_POSTGRES_URL` (scripts/test.sh starts one).
enum TestDatabase {
    /// The engine under test.
    enum Engine: String, CustomStringConvertible {
        case sqlite, postgres

        var description: String { rawValue }
    }

    /// The cluster's address, when one was started for the tests.
    static let postgresURL: String? = ProcessInfo.processInfo.environment["STOREFRONT_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// Whether tests on PostgreSQL can run.
    static var hasPostgres: Bool { postgresURL != nil }

    /// A `--database` value for a shop that does not exist yet: a file in `folder`, or a new empty database
    /// on the cluster (the servers create the tables and seed it, racing as they would on a new file).
    static func make(_ engine: Engine, in folder: TemporaryDirectory) throws -> String {
        switch engine {
        case .sqlite:
            return folder.path + "/shop.sqlite"
        case .postgres:
            guard let base = postgresURL else { throw ServerProcessError(description: "STOREFRONT_TEST_POSTGRES_URL is not set") }
            let name = "e2e_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
            _ = try Psql.run(url: base, sql: "CREATE DATABASE \(name)")
            return replacingDatabase(of: base, with: name)
        }
    }

    /// `url` naming the database `name` instead of its own.
    static func replacingDatabase(of url: String, with name: String) -> String {
        var components = URLComponents(string: url)!
        components.path = "/" + name
        return components.string!
    }
}

/// Runs SQL through `psql` (from the cluster's package), as a program other than the server would.
enum Psql {
    /// The rows of `sql` on `url`, each a list of column texts (NULL as an empty text).
    static func run(url: String, sql: String) throws -> [[String]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Unaligned, tuples only, unit and record separators that no stored text holds.
        process.arguments = ["psql", url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-F", "\u{1F}", "-R", "\u{1E}", "-c", sql]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ServerProcessError(description: "psql failed (\(process.terminationStatus)): \(errorText)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        guard !text.isEmpty else { return [] }
        return text.split(separator: "\u{1E}", omittingEmptySubsequences: true).map { record in
            record.trimmingCharacters(in: .newlines).split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        }
    }
}
