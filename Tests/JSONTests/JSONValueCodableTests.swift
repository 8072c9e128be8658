import JSON
import Testing

@Suite struct JSONValueCodableTests {
    struct Line: Codable, Equatable {
        var productId: String
        var quantity: Int
        var note: String?
        var tags: [String]
        var nested: [String: Int]
    }

    @Test func encodesAndDecodesStructsRoundTrip() throws {
        let line = Line(productId: "p-0001", quantity: 2, note: nil, tags: ["a"], nested: ["x": 1])
        let value = try JSONValueEncoder().encode(line)
        #expect(value == ["productId": "p-0001", "quantity": 2, "tags": ["a"], "nested": ["x": 1]])
        #expect(try JSONValueDecoder().decode(Line.self, from: value) == line)
    }

    @Test func namesTheMissingMemberInTheError() {
        do {
            _ = try JSONValueDecoder().decode(Line.self, from: ["quantity": 1, "tags": [], "nested": [:]])
            Issue.record("expected an error")
        } catch DecodingError.keyNotFound(let key, _) {
            #expect(key.stringValue == "productId")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func refusesNumbersThatAreNotWholeOrOutOfRange() {
        let base: [String: JSONValue] = ["productId": "p", "tags": [], "nested": [:]]
        for bad: JSONValue in [2.5, .double(1e30), "2", nil] {
            var members = base
            members["quantity"] = bad
            #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Line.self, from: .object(members)) }
        }
        var members = base
        members["quantity"] = 3.0
        #expect((try? JSONValueDecoder().decode(Line.self, from: .object(members)))?.quantity == 3)
    }

    @Test func reportsTheCodingPathOfANestedMismatch() {
        do {
            _ = try JSONValueDecoder().decode([Line].self, from: [["productId": 5, "quantity": 1, "tags": [], "nested": [:]]])
            Issue.record("expected an error")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["0", "productId"])
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    struct Members: Decodable {
        var text: String
        var flag: Bool
        var count: Int
        var wide: Int64
        var maybeText: String?
        var maybeCount: Int?
        var maybeWide: Int64?
    }

    /// The keyed container reads strings, booleans and integers in place; what it decodes and the errors it
    /// gives (message, coding path) are those of the generic path, which decodes a value at the top level.
    @Test func decodesMembersInPlaceAsTheGenericPathDoes() throws {
        let good: [String: JSONValue] = ["text": "a", "flag": true, "count": 3.0, "wide": 5, "maybeText": nil, "maybeWide": 7]
        let decoded = try JSONValueDecoder().decode(Members.self, from: .object(good))
        #expect(decoded.text == "a" && decoded.flag && decoded.count == 3 && decoded.wide == 5)
        #expect(decoded.maybeText == nil && decoded.maybeCount == nil && decoded.maybeWide == 7)

        func error<T: Decodable>(_ type: T.Type, _ value: JSONValue) -> (path: [String], description: String)? {
            do {
                _ = try JSONValueDecoder().decode(type, from: value)
                return nil
            } catch let DecodingError.typeMismatch(_, context), let DecodingError.dataCorrupted(context) {
                return (context.codingPath.map(\.stringValue), context.debugDescription)
            } catch {
                return ("\(error)".isEmpty ? [] : ["unexpected"], "\(error)")
            }
        }
        let cases: [(member: String, bad: JSONValue, alone: (path: [String], description: String)?)] = [
            ("text", 1, error(String.self, 1)), ("flag", "yes", error(Bool.self, "yes")), ("count", 2.5, error(Int.self, 2.5)),
            ("count", "2", error(Int.self, "2")), ("wide", .double(1e30), error(Int64.self, .double(1e30))),
            ("maybeText", false, error(String.self, false)), ("maybeCount", .double(1e30), error(Int.self, .double(1e30))),
            ("maybeWide", "7", error(Int64.self, "7")),
        ]
        for (member, bad, alone) in cases {
            var members = good
            members[member] = bad
            let keyed = error(Members.self, .object(members))
            #expect(keyed?.path == [member], "\(member)")
            #expect(keyed?.description == alone?.description, "\(member): \(String(describing: keyed)) vs \(String(describing: alone))")
            #expect(alone?.path == [])
        }
    }

    struct Texts: Decodable {
        var text: String
        var maybeText: String?
        var list: [String]
        var raw: JSONValue
    }

    /// A string holding U+0000 is refused wherever it is decoded, naming its path; a `JSONValue` is kept whole.
    @Test func refusesStringsHoldingNULAndNamesWhere() throws {
        let good: [String: JSONValue] = ["text": "a", "maybeText": "b", "list": ["c"], "raw": "d\u{0}e"]
        let decoded = try JSONValueDecoder().decode(Texts.self, from: .object(good))
        #expect(decoded.raw == "d\u{0}e" && decoded.list == ["c"])
        let cases: [(members: [String: JSONValue], path: [String])] = [
            (["text": "p-0001\u{0}x"], ["text"]), (["maybeText": "\u{0}"], ["maybeText"]), (["list": ["c", "x\u{0}"]], ["list", "1"]),
        ]
        for (changes, path) in cases {
            do {
                _ = try JSONValueDecoder().decode(Texts.self, from: .object(good.merging(changes) { $1 }))
                Issue.record("\(path): expected an error")
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.codingPath.map(\.stringValue) == path)
                #expect(context.debugDescription == "must not contain U+0000 (NUL)")
            } catch {
                Issue.record("\(path): unexpected \(error)")
            }
        }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(String.self, from: "a\u{0}") }
        #expect(try JSONValueDecoder().decode(String.self, from: "a\u{1}é") == "a\u{1}é")
    }
}
