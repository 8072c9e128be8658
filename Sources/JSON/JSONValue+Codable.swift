extension JSONValue: Codable {
    /// Decodes any JSON value (with ``JSONValueDecoder`` this is a copy of the value itself).
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements = [JSONValue]()
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members = [String: JSONValue]()
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(members)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? single.decode(Int64.self) {
            self = .integer(integer)
        } else if let double = try? single.decode(Double.self) {
            self = .double(double)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// Encodes this value as itself.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let bool):
            var single = encoder.singleValueContainer()
            try single.encode(bool)
        case .integer(let integer):
            var single = encoder.singleValueContainer()
            try single.encode(integer)
        case .double(let double):
            var single = encoder.singleValueContainer()
            try single.encode(double)
        case .string(let string):
            var single = encoder.singleValueContainer()
            try single.encode(string)
        case .array(let elements):
            var array = encoder.unkeyedContainer()
            for element in elements { try array.encode(element) }
        case .object(let members):
            var object = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in members { try object.encode(value, forKey: AnyKey(stringValue: key)) }
        }
    }
}

/// A coding key for any member name.
private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
