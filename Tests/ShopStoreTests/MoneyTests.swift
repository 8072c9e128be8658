import Foundation
import Shop
import Testing

@Suite struct MoneyTests {
    @Test(arguments: [
        ("19.99", 1_999), ("5", 500), ("0.5", 50), ("0.05", 5), ("-3.10", -310), ("0", 0),
        ("123456789012345.99", 12_345_678_901_234_599),
    ] as [(String, Int64)])
    func parsesDecimalStrings(text: String, cents: Int64) {
        #expect(Money(decimalString: text) == Money(minorUnits: cents))
    }

    @Test(arguments: ["", " 1", "1 ", "+1", "1.234", ".5", "5.", "1,00", "1e3", "abc", "--1", "1.2.3", "١٢", "1234567890123456", "-"])
    func rejectsGarbage(text: String) {
        #expect(Money(decimalString: text) == nil)
    }

    @Test func formatsWithTwoDecimals() {
        #expect(Money(minorUnits: 1_999).description == "19.99")
        #expect(Money(minorUnits: 5).description == "0.05")
        #expect(Money(minorUnits: -310).description == "-3.10")
        #expect(Money.zero.description == "0.00")
    }

    @Test func arithmeticIsExact() {
        let price = Money(decimalString: "0.10")!
        #expect(price * 3 == Money(decimalString: "0.30"))
        #expect([price, price, price].sum() + price == Money(minorUnits: 40))
        #expect(Money(minorUnits: 1_005).applying(basisPoints: 700) == Money(minorUnits: 70))
        #expect(Money(minorUnits: 50).applying(basisPoints: 1_000) == Money(minorUnits: 5))
        #expect(Money(minorUnits: 25).applying(basisPoints: 1_000) == Money(minorUnits: 3))  // half away from zero
    }

    @Test func codableAsADecimalString() throws {
        let data = try JSONEncoder().encode(["price": Money(minorUnits: 1_999)])
        #expect(String(decoding: data, as: UTF8.self) == #"{"price":"19.99"}"#)
        #expect(try JSONDecoder().decode([String: Money].self, from: data) == ["price": Money(minorUnits: 1_999)])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Money].self, from: Data(#"["1.999"]"#.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Money].self, from: Data("[19.99]".utf8)) }
    }
}
