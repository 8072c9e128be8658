import Foundation

/// An exact amount of money in minor units (cents), never a floating-point number.
///
/// `Money` encodes and decodes as a decimal string with two decimals:
///
/// ```swift
/// let price = Money(decimalString: "19.99")!   // 1999 cents
/// (price * 3).description                       // "59.97"
/// ```
public struct Money: Hashable, Comparable, Sendable {
    /// The amount in minor units (cents).
    public var minorUnits: Int64

    /// Creates an amount from minor units (cents).
    public init(minorUnits: Int64) {
        self.minorUnits = minorUnits
    }

    /// Zero.
    public static let zero = Money(minorUnits: 0)

    /// Parses a decimal string such as `"19.99"`, `"5"`, `"0.5"` or `"-3.10"`.
    ///
    /// Accepted: an optional leading `-`, one or more ASCII digits, then optionally a `.` followed by one
    /// or two digits. Rejected: empty text, whitespace, `+`, exponents, grouping separators, a bare `.`,
    /// more than two decimals, and amounts too large for `Int64` cents (more than 15 integer digits).
    /// Whether a negative or zero amount makes sense is the caller's decision (see ``isPositive``).
    /// - Parameter decimalString: The text to parse.
    public init?(decimalString: String) {
        var text = Substring(decimalString)
        var negative = false
        if text.first == "-" {
            negative = true
            text = text.dropFirst()
        }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 15,
              whole.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        var cents: Int64 = 0
        if parts.count == 2 {
            let fraction = parts[1]
            guard (1...2).contains(fraction.count), fraction.allSatisfy({ $0.isASCII && $0.isNumber })
            else { return nil }
            cents = Int64(fraction)! * (fraction.count == 1 ? 10 : 1)
        }
        let units = Int64(whole)! * 100 + cents
        self.minorUnits = negative ? -units : units
    }

    /// Whether the amount is greater than zero.
    public var isPositive: Bool { minorUnits > 0 }

    /// The amount multiplied by a rate in basis points (1/100 of a percent), rounded half away from zero.
    /// - Parameter basisPoints: The rate; `1900` is 19 %.
    /// - Returns: The rounded share of this amount.
    public func applying(basisPoints: Int) -> Money {
        let product = minorUnits * Int64(basisPoints)
        let (quotient, remainder) = product.quotientAndRemainder(dividingBy: 10_000)
        let roundsAway = abs(remainder) * 2 >= 10_000
        return Money(minorUnits: quotient + (roundsAway ? (product < 0 ? -1 : 1) : 0))
    }

    public static func + (lhs: Money, rhs: Money) -> Money { Money(minorUnits: lhs.minorUnits + rhs.minorUnits) }
    public static func - (lhs: Money, rhs: Money) -> Money { Money(minorUnits: lhs.minorUnits - rhs.minorUnits) }
    public static func += (lhs: inout Money, rhs: Money) { lhs = lhs + rhs }
    /// The amount for `quantity` items of this unit price.
    public static func * (lhs: Money, quantity: Int) -> Money { Money(minorUnits: lhs.minorUnits * Int64(quantity)) }
    public static func < (lhs: Money, rhs: Money) -> Bool { lhs.minorUnits < rhs.minorUnits }
}

extension Sequence where Element == Money {
    /// The sum of the amounts. Inlinable: called from other modules on arrays (a cart's tax, line by line),
    /// unspecialised it went through the sequence's witness tables, ~500 instructions per amount.
    @inlinable
    public func sum() -> Money {
        var minorUnits: Int64 = 0
        for amount in self { minorUnits += amount.minorUnits }
        return Money(minorUnits: minorUnits)
    }
}

extension Money: CustomStringConvertible {
    /// The amount as a decimal string with two decimals, such as `"19.99"` or `"-0.05"`.
    public var description: String {
        // Written digit by digit into the string's own storage (a cart's amounts are written on every
        // change; interpolation cost ~10 times as much).
        var magnitude = minorUnits.magnitude
        var digits = 3  // at least "0.00"
        var rest = magnitude / 1_000
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        let length = digits + 1 + (minorUnits < 0 ? 1 : 0)
        return String(unsafeUninitializedCapacity: length) { buffer in
            var position = length
            for place in 0..<digits {
                if place == 2 {
                    position -= 1
                    buffer[position] = UInt8(ascii: ".")
                }
                position -= 1
                buffer[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            if minorUnits < 0 { buffer[0] = UInt8(ascii: "-") }
            return length
        }
    }
}

extension Money: Codable {
    /// Decodes a decimal string such as `"19.99"`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let money = Money(decimalString: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Expected a decimal amount such as \"19.99\", got \"\(text)\"")
        }
        self = money
    }

    /// Encodes the amount as a decimal string such as `"19.99"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
