import Foundation

/// A moment on the wire: an ISO-8601 string in UTC, such as `"2025-06-01T00:00:00Z"`.
public struct Timestamp: Codable, Equatable, Sendable, CustomStringConvertible {
    /// The ISO-8601 text.
    public var iso8601: String

    /// The timestamp of `date`: what `date.formatted(.iso8601)` writes (whole seconds, rounded down).
    ///
    /// Written here for the years 1600 to 9999, the dates a shop has: Foundation's format style cost ~2 600
    /// instructions a date, and a price ticker shows 100 of them on every change of its product
    /// (BENCHMARKS.md, round 23). Earlier dates are left to Foundation, whose calendar is Julian before
    /// 1582. `TimestampTests` compares the two on random dates.
    public init(_ date: Date) {
        iso8601 = Self.iso8601(date) ?? date.formatted(.iso8601)
    }

    /// Decodes the ISO-8601 text.
    public init(from decoder: any Decoder) throws {
        iso8601 = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the ISO-8601 text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }

    public var description: String { iso8601 }

    /// `yyyy-MM-ddTHH:mm:ssZ` of `date` in UTC (proleptic Gregorian), or nil outside the years 1600 to 9999 (or
    /// for a date that is not finite).
    static func iso8601(_ date: Date) -> String? {
        // From the seconds a `Date` holds (since 2001), rounded down first: converted to seconds since 1970 first,
        // a date a hair before a whole second would round up onto it (found in review). The sum is exact.
        let interval = date.timeIntervalSinceReferenceDate.rounded(.down) + 978_307_200
        // 1600-01-01T00:00:00Z and 10000-01-01T00:00:00Z.
        guard interval >= -11_676_096_000, interval < 253_402_300_800 else { return nil }
        let seconds = Int64(interval)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civilDate(daysSince1970: days)
        var bytes = [UInt8](repeating: 0, count: 20)
        func put(_ value: Int, digits: Int, at offset: Int) {
            var value = value
            for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                bytes[index] = UInt8(truncatingIfNeeded: 48 + value % 10)
                value /= 10
            }
        }
        put(year, digits: 4, at: 0)
        bytes[4] = UInt8(ascii: "-")
        put(month, digits: 2, at: 5)
        bytes[7] = UInt8(ascii: "-")
        put(day, digits: 2, at: 8)
        bytes[10] = UInt8(ascii: "T")
        put(secondOfDay / 3_600, digits: 2, at: 11)
        bytes[13] = UInt8(ascii: ":")
        put(secondOfDay / 60 % 60, digits: 2, at: 14)
        bytes[16] = UInt8(ascii: ":")
        put(secondOfDay % 60, digits: 2, at: 17)
        bytes[19] = UInt8(ascii: "Z")
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The proleptic Gregorian year, month and day of a day counted from 1970-01-01 (Howard Hinnant's
    /// `civil_from_days`).
    private static func civilDate(daysSince1970 days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}
