import Foundation
import Randomness
import Testing
@testable import ShopFeatures

/// `Timestamp`'s own ISO-8601 text against Foundation's `.iso8601` format style, which it replaces.
@Suite struct TimestampTests {
    @Test func writesWhatFoundationWritesForRandomAndEdgeDates() {
        var random = SeededRandom(seed: 0x1508_8601)
        var dates = [
            0, -0.5, 0.999, -1, 951_782_400, 951_868_799.75, -2_208_988_800, -11_676_096_000, 253_402_300_799.999,
            1_764_374_400, 4_107_542_399, 1_234_567_890.123_456,
        ].map(Date.init(timeIntervalSince1970:))
        for _ in 0..<20_000 {
            let seconds = Double(Int64.random(in: -11_676_096_000..<253_402_300_800, using: &random))
            dates.append(Date(timeIntervalSince1970: seconds + (Bool.random(using: &random) ? Double.random(in: 0..<1, using: &random) : 0)))
        }
        for _ in 0..<2_000 {  // around now, where a shop's dates are
            dates.append(Date(timeIntervalSince1970: Double.random(in: 1_600_000_000..<2_000_000_000, using: &random)))
        }
        for date in dates {
            #expect(Timestamp.iso8601(date) == date.formatted(.iso8601), "\(date.timeIntervalSince1970)")
        }
    }

    @Test func leavesDatesBefore1600AndAfter9999ToFoundation() {
        for seconds in [-11_676_096_000.5, -62_135_596_800, 253_402_300_800, 1e15, -1e15] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(Timestamp.iso8601(date) == nil)
            #expect(Timestamp(date).iso8601 == date.formatted(.iso8601))
        }
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: .nan)) == nil)
    }

    /// Dates as a `Date` holds them (seconds since 2001, as `Date()` and date arithmetic give) just before a whole
    /// second: seconds since 1970 would round them up onto that second, which Foundation does not (found in review).
    @Test func writesWhatFoundationWritesJustBeforeAWholeSecond() {
        let date = Date(timeIntervalSinceReferenceDate: -5e-8)  // 2000-12-31T23:59:59.99999995Z
        #expect(Timestamp(date).iso8601 == date.formatted(.iso8601))
        var random = SeededRandom(seed: 0x2001)
        for _ in 0..<20_000 {
            let second = Double(Int64.random(in: -12_654_403_200..<252_423_993_600, using: &random))
            let date = Date(timeIntervalSinceReferenceDate: second.nextDown)
            #expect(Timestamp(date).iso8601 == date.formatted(.iso8601), "\(date.timeIntervalSinceReferenceDate)")
        }
    }
}
