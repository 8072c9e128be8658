import JSON

/// One RFC 6902 operation.
public enum JSONPatchOperation: Equatable, Sendable {
    /// Adds `value` at `path` (inserting into an array, or setting an object member).
    case add(path: JSONPointer, value: JSONValue)
    /// Removes the value at `path`.
    case remove(path: JSONPointer)
    /// Replaces the value at `path`, which must exist.
    case replace(path: JSONPointer, value: JSONValue)
    /// Removes the value at `from` and adds it at `path`.
    case move(from: JSONPointer, path: JSONPointer)
    /// Adds a copy of the value at `from` at `path`.
    case copy(from: JSONPointer, path: JSONPointer)
    /// Fails the patch unless the value at `path` equals `value`.
    case test(path: JSONPointer, value: JSONValue)

    /// The operation as a JSON object, e.g. `{"op":"replace","path":"/total","value":"9.99"}`.
    public var jsonValue: JSONValue {
        switch self {
        case .add(let path, let value): ["op": "add", "path": .string(path.description), "value": value]
        case .remove(let path): ["op": "remove", "path": .string(path.description)]
        case .replace(let path, let value): ["op": "replace", "path": .string(path.description), "value": value]
        case .move(let from, let path): ["op": "move", "from": .string(from.description), "path": .string(path.description)]
        case .copy(let from, let path): ["op": "copy", "from": .string(from.description), "path": .string(path.description)]
        case .test(let path, let value): ["op": "test", "path": .string(path.description), "value": value]
        }
    }

    /// Reads an operation object.
    ///
    /// - Throws: ``JSONPatchError`` when the object is not a valid operation.
    public init(json: JSONValue) throws(JSONPatchError) {
        guard case .object(let members) = json, let op = members["op"]?.stringValue else {
            throw .invalidOperation("an operation must be an object with a string \"op\"")
        }
        func pointer(_ name: String) throws(JSONPatchError) -> JSONPointer {
            guard let text = members[name]?.stringValue else { throw .invalidOperation("\"\(op)\" needs a string \"\(name)\"") }
            return try JSONPointer(text)
        }
        func value() throws(JSONPatchError) -> JSONValue {
            guard let value = members["value"] else { throw .invalidOperation("\"\(op)\" needs a \"value\"") }
            return value
        }
        switch op {
        case "add": self = .add(path: try pointer("path"), value: try value())
        case "remove": self = .remove(path: try pointer("path"))
        case "replace": self = .replace(path: try pointer("path"), value: try value())
        case "move": self = .move(from: try pointer("from"), path: try pointer("path"))
        case "copy": self = .copy(from: try pointer("from"), path: try pointer("path"))
        case "test": self = .test(path: try pointer("path"), value: try value())
        default: throw .invalidOperation("unknown op \"\(op)\"")
        }
    }
}
