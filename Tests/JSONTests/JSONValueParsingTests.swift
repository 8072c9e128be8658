import Randomness
import JSON
import Testing

@Suite struct JSONValueParsingTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue(parsing: #"{"a":[1,2.5,"x",true,false,null],"b":{"c":-7}}"#)
        #expect(value == ["a": [1, 2.5, "x", true, false, nil], "b": ["c": -7]])
    }

    @Test func parsesScalarsAtTheTopLevel() throws {
        #expect(try JSONValue(parsing: "42") == 42)
        #expect(try JSONValue(parsing: #""hi""#) == "hi")
        #expect(try JSONValue(parsing: "null") == nil)
    }

    @Test func keepsNulCharactersAndUnicodeInStrings() throws {
        let value = try JSONValue(parsing: #"["a\u0000b","é😀"]"#)
        #expect(value == ["a\u{0}b", "é😀"])
        #expect(try JSONValue(parsing: value.serialized()) == value)
    }

    @Test func readsIntegersTooLargeFor64BitsAsDoubles() throws {
        let value = try JSONValue(parsing: #"{"id":1,"n":123456789012345678901234567890}"#)
        #expect(value["id"] == 1)
        #expect(value["n"] == .double(1.2345678901234568e29))
    }

    @Test func aTooLargeIntegerNeverTurnsAnotherNumberIntoADifferentInteger() throws {
        let overflow = #""n":123456789012345678901234567890"#
        let value = try JSONValue(parsing: #"{"a":9007199254740993,"b":-9223372036854775809,"c":9223372036854775807,"d":-9007199254740991,\#(overflow)}"#)
        #expect(value["a"] == .double(9_007_199_254_740_992))  // not the integer 9007199254740992
        #expect(value["b"] == .double(-9_223_372_036_854_775_808))  // not Int64.min
        #expect(value["c"] == .double(9_223_372_036_854_775_807))
        #expect(value["d"] == -9_007_199_254_740_991)  // below 2^53: exact
        #expect(try JSONValue(parsing: "-9223372036854775809") == .double(-9_223_372_036_854_775_808))
    }

    @Test func reportsWhereTheTextIsBroken() {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: #"{"a":}"#) }
        do {
            _ = try JSONValue(parsing: "[1,\n2,]")
            Issue.record("expected an error")
        } catch {
            #expect(error.line == 2)
            #expect(error.position > 0)
            #expect(!error.text.isEmpty)
        }
    }

    @Test func rejectsInvalidUTF8AndEmptyInput() {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0xFF, 0xFE, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [UInt8]()) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: "1 2") }
    }

    @Test func rejectsNestingBeyondTheLimitWithoutCrashing() {
        let depth = 100_000
        let allowed = JSONValue.maximumNestingDepth
        /// The error's text when `text` fails to parse, nil when it parses.
        func failure(_ text: String) -> String? {
            do {
                _ = try JSONValue(parsing: text)
                return nil
            } catch {
                return error.text
            }
        }
        let tooDeepText = "nesting deeper than \(allowed) levels"
        #expect(failure(String(repeating: "[", count: depth) + String(repeating: "]", count: depth)) == tooDeepText)
        #expect(failure(String(repeating: "[", count: allowed) + String(repeating: "]", count: allowed)) == nil)
        #expect(failure(String(repeating: "[", count: allowed + 1) + String(repeating: "]", count: allowed + 1)) == tooDeepText)
        #expect(failure(String(repeating: #"{"a":"#, count: allowed) + "1" + String(repeating: "}", count: allowed)) == nil)
        #expect(failure(String(repeating: #"{"a":"#, count: allowed + 1) + "1" + String(repeating: "}", count: allowed + 1)) == tooDeepText)
    }

    @Test func serialisesCompactlyWithSortedKeysAndNoRawNewlines() {
        let value: JSONValue = ["b": "line\nbreak", "a": [1, nil, true], "c": ["z": 1.5]]
        #expect(value.serializedString() == #"{"a":[1,null,true],"b":"line\nbreak","c":{"z":1.5}}"#)
    }

    @Test func serialisesNonFiniteDoublesAsNull() {
        #expect(JSONValue.array([.double(.nan), .double(.infinity)]).serializedString() == "[null,null]")
    }

    @Test func roundTripsRandomDocuments() throws {
        var generator = SeededRandom(seed: 7)
        for _ in 0..<300 {
            let value = JSONValue.random(depth: 4, using: &generator)
            #expect(try JSONValue(parsing: value.serialized()) == value)
        }
    }
}
