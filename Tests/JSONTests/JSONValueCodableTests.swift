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
}
