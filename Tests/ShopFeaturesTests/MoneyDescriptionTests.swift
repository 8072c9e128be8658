import Randomness
import Shop
import Testing

/// `Money.description`, written digit by digit, against the plain formatting it replaced, on the edges
/// (zero, sub-unit amounts, both ends of `Int64`) and random amounts of every size, and back through
/// `Money(decimalString:)` (for the amounts it takes).
@Suite struct MoneyDescriptionTests {
    @Test func descriptionIsTheTwoDecimalForm() {
        var random = SeededRandom(seed: 0x4D4F_4E45_59)
        var amounts: [Int64] = [0, 1, -1, 9, 10, 99, 100, 101, -100, 999, 1_000, 1_999, -2_000, .max, .min, .max - 1, .min + 1]
        for _ in 0..<2_000 {
            let digits = Int.random(in: 1...18, using: &random)
            var magnitude: Int64 = 1
            for _ in 0..<digits { magnitude *= 10 }
            amounts.append(Int64.random(in: -magnitude...magnitude, using: &random))
        }
        for minorUnits in amounts {
            let money = Money(minorUnits: minorUnits)
            #expect(money.description == Self.reference(minorUnits), "\(minorUnits)")
            // Parsing takes at most 15 integer digits.
            if minorUnits.magnitude < 100_000_000_000_000_000 { #expect(Money(decimalString: money.description) == money) }
        }
    }

    /// The formatting by interpolation.
    static func reference(_ minorUnits: Int64) -> String {
        let magnitude = minorUnits.magnitude
        let fraction = magnitude % 100
        return "\(minorUnits < 0 ? "-" : "")\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
