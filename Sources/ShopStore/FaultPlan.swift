import Foundation

/// Which services misbehave, and how: added latency and a share of failed calls. Off by default.
///
/// Grammar of the text form (whitespace around tokens is ignored, names are case-sensitive):
///
/// ```
/// spec     = "" | entry *( ";" entry )          ; an empty spec (or empty entries) injects nothing
/// entry    = service ":" setting *( "," setting )
/// service  = "catalog" | "favorites" | "cart" | "orders" | "recommendations" | "accounts" | "notifications" | "analytics" | "*"
/// setting  = "latency=" duration | "failure-rate=" rate
/// duration = number ( "ms" | "s" )               ; 300ms, 1.5s, 0ms
/// rate     = number                               ; from 0 to 1: 0.2 fails one call in five
/// ```
///
/// `analytics` faults apply to trending only: recording an event never fails. `*` applies its settings to
/// every service; a later entry for the same service overrides the
/// settings it names. Example: `catalog:latency=300ms,failure-rate=0.2;cart:failure-rate=0.5`.
public struct FaultPlan: Equatable, Sendable {
    /// The faults per service; services not listed behave normally.
    public var faults: [ShopServiceName: Fault]

    /// Creates a plan.
    public init(faults: [ShopServiceName: Fault] = [:]) {
        self.faults = faults
    }

    /// No faults.
    public static let none = FaultPlan()

    /// Whether the plan injects nothing.
    public var isEmpty: Bool { faults.values.allSatisfy { $0 == Fault() } }

    /// Parses the text form described on ``FaultPlan``.
    /// - Throws: ``FaultPlanError`` naming the offending part.
    public init(parsing spec: String) throws {
        var faults: [ShopServiceName: Fault] = [:]
        for entry in spec.split(separator: ";", omittingEmptySubsequences: false) {
            let entry = entry.trimmingCharacters(in: .whitespaces)
            if entry.isEmpty { continue }
            guard let colon = entry.firstIndex(of: ":") else {
                throw FaultPlanError("Expected \"service:setting=value\" in \"\(entry)\".")
            }
            let serviceName = entry[..<colon].trimmingCharacters(in: .whitespaces)
            let services: [ShopServiceName]
            if serviceName == "*" {
                services = ShopServiceName.allCases
            } else if let service = ShopServiceName(rawValue: serviceName) {
                services = [service]
            } else {
                throw FaultPlanError("Unknown service \"\(serviceName)\"; expected one of "
                    + ShopServiceName.allCases.map(\.rawValue).joined(separator: ", ") + " or *.")
            }
            for setting in entry[entry.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false) {
                let parts = setting.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { throw FaultPlanError("Expected \"name=value\", got \"\(setting)\".") }
                for service in services {
                    var fault = faults[service] ?? Fault()
                    switch parts[0] {
                    case "latency": fault.latency = try Self.parseDuration(parts[1])
                    case "failure-rate": fault.failureRate = try Self.parseRate(parts[1])
                    default: throw FaultPlanError("Unknown setting \"\(parts[0])\"; expected latency or failure-rate.")
                    }
                    faults[service] = fault
                }
            }
        }
        self.faults = faults
    }

    private static func parseDuration(_ text: String) throws -> Duration {
        let (number, scale): (Substring, Double) =
            if text.hasSuffix("ms") { (text.dropLast(2), 1) }
            else if text.hasSuffix("s") { (text.dropLast(1), 1000) }
            else { throw FaultPlanError("A latency needs a unit, ms or s: \"\(text)\".") }
        guard let value = Double(number), value >= 0, value.isFinite, !number.contains(where: { $0.isLetter }) else {
            throw FaultPlanError("Invalid latency \"\(text)\".")
        }
        return .microseconds(Int64((value * scale * 1000).rounded()))
    }

    private static func parseRate(_ text: String) throws -> Double {
        guard let rate = Double(text), (0...1).contains(rate), !text.contains(where: { $0.isLetter }) else {
            throw FaultPlanError("A failure rate is a number from 0 to 1, not \"\(text)\".")
        }
        return rate
    }
}

/// How one service misbehaves.
public struct Fault: Equatable, Sendable {
    /// Added before every call.
    public var latency: Duration
    /// The share of calls that fail with `serviceUnavailable`, from 0 to 1.
    public var failureRate: Double

    /// Creates a fault; the defaults inject nothing.
    public init(latency: Duration = .zero, failureRate: Double = 0) {
        self.latency = latency
        self.failureRate = failureRate
    }
}

/// The services faults can be injected into, by their names in a fault spec.
public enum ShopServiceName: String, CaseIterable, Sendable {
    case catalog, favorites, cart, orders, recommendations, accounts, notifications, analytics
}

/// A fault spec that cannot be parsed.
public struct FaultPlanError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the offending text.
    public var message: String

    init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
