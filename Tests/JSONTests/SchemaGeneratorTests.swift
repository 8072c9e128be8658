import JSON
import JSONSchema
import Testing

@Suite struct SchemaGeneratorTests {
    enum Color: String, Codable, CaseIterable { case red, green }

    /// Encodes `nil` as `null`, and asks about `null` when decoding, as the ViewModel states' wrapper does.
    struct Nullable<Wrapped: Codable>: Codable {
        var value: Wrapped?
        init(value: Wrapped?) { self.value = value }
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            value = container.decodeNil() ? nil : try container.decode(Wrapped.self)
        }
        func encode(to encoder: any Encoder) throws {}
    }

    struct Price: Codable {
        var cents: Int
        init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let cents = Int(text) else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: text)) }
            self.cents = cents
        }
        func encode(to encoder: any Encoder) throws {}
    }

    struct Problem: Codable { var message: String }

    struct Shape: Codable {
        var name: String
        var count: Int
        var ratio: Double
        var flag: Bool
        var nickname: String?
        var color: Color
        var tags: [String]
        var errors: [String: String]
        var price: Price
        var problem: Nullable<Problem>
        var problems: [Problem]
        var maybe: Nullable<Int>

        enum CodingKeys: String, CodingKey {
            case name, count, ratio, flag, nickname, color, tags, errors, price, problem, problems, maybe
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            count = try container.decode(Int.self, forKey: .count)
            ratio = try container.decode(Double.self, forKey: .ratio)
            flag = try container.decode(Bool.self, forKey: .flag)
            nickname = try container.decodeIfPresent(String.self, forKey: .nickname)
            color = try container.decode(Color.self, forKey: .color)
            tags = try container.decode([String].self, forKey: .tags)
            errors = try container.decode([String: String].self, forKey: .errors)
            price = try container.decode(Price.self, forKey: .price)
            problem = try container.decodeIfPresent(Nullable<Problem>.self, forKey: .problem) ?? Nullable(value: nil)
            problems = try container.decode([Problem].self, forKey: .problems)
            maybe = try container.decode(Nullable<Int>.self, forKey: .maybe)
        }
    }

    @Test func recordsTheShapeTheTypesDecodingAsksFor() throws {
        let generator = SchemaGenerator()
        generator.define(Price.self, as: "Price", schema: ["type": "string", "pattern": "^[0-9]+$"], sample: "0")
        generator.name(Problem.self, as: "Problem")
        let schema = try generator.schema(of: Shape.self)
        #expect(schema == [
            "type": "object", "additionalProperties": false,
            "required": ["color", "count", "errors", "flag", "maybe", "name", "price", "problem", "problems", "ratio", "tags"],
            "properties": [
                "name": ["type": "string"], "count": ["type": "integer"], "ratio": ["type": "number"],
                "flag": ["type": "boolean"], "nickname": ["type": "string"],
                "color": ["enum": ["red", "green"]],
                "tags": ["type": "array", "items": ["type": "string"]],
                "errors": ["type": "object", "additionalProperties": ["type": "string"]],
                "price": ["$ref": "#/$defs/Price"],
                "problem": ["oneOf": [["type": "null"], ["$ref": "#/$defs/Problem"]]],
                "problems": ["type": "array", "items": ["$ref": "#/$defs/Problem"]],
                "maybe": ["type": ["integer", "null"]],
            ],
        ])
        #expect(generator.definitions == [
            "Price": ["type": "string", "pattern": "^[0-9]+$"],
            "Problem": [
                "type": "object", "additionalProperties": false, "required": ["message"],
                "properties": ["message": ["type": "string"]],
            ],
        ])
    }

    @Test func listsTheMembersOfAnArgumentType() throws {
        struct Arguments: Decodable {
            var productId: String
            var quantity: Int?
        }
        let members = try SchemaGenerator().members(of: Arguments.self)
        #expect(members.map(\.name) == ["productId", "quantity"])
        #expect(members.map(\.required) == [true, false])
        #expect(members.map(\.schema) == [["type": "string"], ["type": "integer"]])
    }
}
