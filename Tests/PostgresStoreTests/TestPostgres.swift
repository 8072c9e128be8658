import Foundation
import Logging
import PostgresNIO
@testable import PostgresStore
import Shop
import ShopStore
import Testing

/// The throwaway PostgreSQL cluster the tests run against: `STOREFRONT_TEST_POSTGRES_URL` (scripts/test.sh
/// starts one with scripts/postgres.sh and sets it). Without it the suites are skipped, saying why.
enum TestPostgres {
    /// The cluster's address, or nil.
    static let baseURL: String? = ProcessInfo.processInfo.environment["STOREFRONT_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// Whether a cluster is available.
    static var isAvailable: Bool { baseURL != nil }

    // Suites say why they are skipped without a cluster with a string literal (the @Suite macro needs a
    // compile-time constant there):
    // @Suite(.enabled(if: TestPostgres.isAvailable, "STOREFRONT_TEST_POSTGRES_URL is not set: no PostgreSQL cluster to test against (scripts/test.sh starts one)"))

    /// A new empty database on the cluster (a unique name per call), for one test.
    static func freshURL(label: String = "t") async throws -> PostgresURL {
        var url = try PostgresURL(baseURL!)
        let name = "\(label)_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased())"
        let connection = try await PostgresConnection.connect(
            configuration: try url.connectionConfiguration(), id: 1, logger: Logger(label: "test"))
        do {
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Logger(label: "test"))
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        url.database = name
        return url
    }

    /// How long one database operation may take in these tests: long, so that no verdict depends on how busy
    /// the machine is (the server's 5 s deadline is tried by the end-to-end fault tests).
    static let answerTimeout = Duration.seconds(120)

    /// Opens `url` with the tests' deadline.
    static func open(url: PostgresURL) async throws -> PostgresShopDatabase {
        try await PostgresShopDatabase.open(url: url, answerTimeout: answerTimeout)
    }

    /// A new database, opened (migrated and seeded with the demo catalog).
    static func freshDatabase(label: String = "t") async throws -> PostgresShopDatabase {
        try await open(url: freshURL(label: label))
    }

    /// Runs one statement on its own connection to `url` (outside the store): what another program would do.
    static func execute(_ sql: String, on url: PostgresURL) async throws -> [PostgresRow] {
        let connection = try await PostgresConnection.connect(
            configuration: try url.connectionConfiguration(), id: 2, logger: Logger(label: "test"))
        do {
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test")).collect()
            try await connection.close()
            return rows
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
