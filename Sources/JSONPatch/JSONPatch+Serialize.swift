import JSON

extension JSONPatch {
    /// Appends the patch's compact serialisation to `buffer`: byte for byte what serialising
    /// ``jsonValue`` writes (members in key order, strings escaped alike), without building the operation
    /// objects and pointer strings first. Every state notification carries a patch; building its value
    /// only to write it cost about as much as diffing.
    public func serialize(into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "["))
        for (index, operation) in operations.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            operation.serialize(into: &buffer)
        }
        buffer.append(UInt8(ascii: "]"))
    }
}

extension JSONPatchOperation {
    /// Appends the operation's object, its members in key order (`from`, `op`, `path`, `value`).
    func serialize(into buffer: inout [UInt8]) {
        switch self {
        case .add(let path, let value): Self.write(op: "add", from: nil, path: path, value: value, into: &buffer)
        case .remove(let path): Self.write(op: "remove", from: nil, path: path, value: nil, into: &buffer)
        case .replace(let path, let value): Self.write(op: "replace", from: nil, path: path, value: value, into: &buffer)
        case .move(let from, let path): Self.write(op: "move", from: from, path: path, value: nil, into: &buffer)
        case .copy(let from, let path): Self.write(op: "copy", from: from, path: path, value: nil, into: &buffer)
        case .test(let path, let value): Self.write(op: "test", from: nil, path: path, value: value, into: &buffer)
        }
    }

    private static func write(op: StaticString, from: JSONPointer?, path: JSONPointer, value: JSONValue?, into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "{"))
        if let from {
            buffer.append(contentsOf: #""from":"#.utf8)
            from.serialize(into: &buffer)
            buffer.append(UInt8(ascii: ","))
        }
        buffer.append(contentsOf: #""op":""#.utf8)
        op.withUTF8Buffer { buffer.append(contentsOf: $0) }
        buffer.append(contentsOf: #"","path":"#.utf8)
        path.serialize(into: &buffer)
        if let value {
            buffer.append(contentsOf: #","value":"#.utf8)
            value.serialize(into: &buffer)
        }
        buffer.append(UInt8(ascii: "}"))
    }
}

extension JSONPointer {
    /// Appends the pointer's string form as a JSON string (`"/lines/3/quantity"`).
    func serialize(into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        for token in tokens {
            buffer.append(UInt8(ascii: "/"))
            JSONValue.appendEscaped(token.replacingTildeAndSlash(), to: &buffer)
        }
        buffer.append(UInt8(ascii: "\""))
    }
}
