import Foundation
import NIOSSL
import PostgresNIO

/// A `postgres://user[:password]@host[:port]/database[?sslmode=…]` address, as libpq and most tools write it.
///
/// `sslmode` is `disable`, `prefer` (the default, as libpq's: TLS when the server offers it) or `require`.
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// The host name or address.
    public var host: String
    /// The port (5432 unless given).
    public var port: Int
    /// The role to connect as.
    public var username: String
    /// The password, if any (never printed).
    public var password: String?
    /// The database name (the user name unless given, as libpq does).
    public var database: String
    /// How TLS is used.
    public var sslMode: SSLMode

    /// TLS to the server.
    public enum SSLMode: String, Sendable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it, plain otherwise.
        case prefer
        /// TLS, or no connection.
        case require
    }

    /// Whether `text` names a PostgreSQL database rather than a SQLite file.
    public static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses an address.
    /// - Throws: ``PostgresURLError`` naming what is wrong.
    public init(_ text: String) throws {
        guard Self.isPostgres(text), let components = URLComponents(string: text) else {
            throw PostgresURLError("expected postgres://user@host:port/database, got \(text)")
        }
        guard let host = components.host, !host.isEmpty else { throw PostgresURLError("the address names no host") }
        guard let user = components.user, !user.isEmpty else { throw PostgresURLError("the address names no user (postgres://USER@host/database)") }
        self.host = host
        port = components.port ?? 5432
        username = user.removingPercentEncoding ?? user
        password = components.password.map { $0.removingPercentEncoding ?? $0 }
        let name = String(components.path.drop(while: { $0 == "/" }))
        database = name.isEmpty ? username : (name.removingPercentEncoding ?? name)
        sslMode = .prefer
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(SSLMode.init(rawValue:)) else {
                    throw PostgresURLError("sslmode must be disable, prefer or require")
                }
                sslMode = mode
            default:
                throw PostgresURLError("unknown parameter \(item.name) (known: sslmode)")
            }
        }
    }

    /// The address without its password, for logs and messages.
    public var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)?sslmode=\(sslMode.rawValue)"
    }

    /// The pool's configuration.
    func clientConfiguration() -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = switch sslMode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
        return PostgresClient.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
    }

    /// A single connection's configuration (the change feed's listener).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS = switch sslMode {
        case .disable: .disable
        case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        return PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
    }
}

/// A malformed ``PostgresURL``.
public struct PostgresURLError: Error, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    init(_ description: String) { self.description = description }
}
