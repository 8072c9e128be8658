import JSON

/// An RFC 6902 JSON Patch: a sequence of operations that turns one document into another.
public struct JSONPatch: Equatable, Sendable {
    /// The operations, applied in order.
    public var operations: [JSONPatchOperation]

    /// A patch of the given operations.
    public init(_ operations: [JSONPatchOperation]) {
        self.operations = operations
    }

    /// Whether the patch changes nothing.
    public var isEmpty: Bool { operations.isEmpty }

    /// The patch as a JSON array of operation objects.
    public var jsonValue: JSONValue { .array(operations.map(\.jsonValue)) }

    /// Reads a patch from a JSON array of operation objects.
    ///
    /// - Throws: ``JSONPatchError/invalidOperation(_:)`` when it is not an array of valid operations.
    public init(json: JSONValue) throws(JSONPatchError) {
        guard case .array(let elements) = json else { throw .invalidOperation("a patch must be an array") }
        var operations = [JSONPatchOperation]()
        for element in elements {
            operations.append(try JSONPatchOperation(json: element))
        }
        self.operations = operations
    }

    /// Applies the patch to `document`, all or nothing.
    ///
    /// - Returns: the patched document.
    /// - Throws: ``JSONPatchError`` for the first operation that cannot be applied.
    public func apply(to document: JSONValue) throws(JSONPatchError) -> JSONValue {
        var document = document
        for operation in operations {
            switch operation {
            case .add(let path, let value):
                try document.insert(value, at: path.tokens[...], pointer: path)
            case .remove(let path):
                _ = try document.remove(at: path.tokens[...], pointer: path)
            case .replace(let path, let value):
                try document.replace(at: path.tokens[...], with: value, pointer: path)
            case .move(let from, let path):
                let value = try document.remove(at: from.tokens[...], pointer: from)
                try document.insert(value, at: path.tokens[...], pointer: path)
            case .copy(let from, let path):
                try document.insert(try document.value(at: from), at: path.tokens[...], pointer: path)
            case .test(let path, let expected):
                guard try document.value(at: path).numericallyEquals(expected) else {
                    throw .testFailed(path.description)
                }
            }
        }
        return document
    }
}

extension JSONValue {
    /// The value `pointer` names.
    ///
    /// - Throws: ``JSONPatchError/pathNotFound(_:)`` when nothing is there.
    public func value(at pointer: JSONPointer) throws(JSONPatchError) -> JSONValue {
        var current = self
        for token in pointer.tokens {
            switch current {
            case .object(let members):
                guard let member = members[token] else { throw .pathNotFound(pointer.description) }
                current = member
            case .array(let elements):
                guard let index = Self.arrayIndex(token, count: elements.count), index < elements.count else {
                    throw .pathNotFound(pointer.description)
                }
                current = elements[index]
            default:
                throw .pathNotFound(pointer.description)
            }
        }
        return current
    }

    /// An RFC 6901 array index: digits without a leading zero, at most `count` (which means "past the end").
    private static func arrayIndex(_ token: String, count: Int) -> Int? {
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            token == "0" || !token.hasPrefix("0"), let index = Int(token), index <= count
        else { return nil }
        return index
    }

    fileprivate mutating func insert(_ value: JSONValue, at tokens: ArraySlice<String>, pointer: JSONPointer) throws(JSONPatchError) {
        guard let token = tokens.first else {
            self = value
            return
        }
        let rest = tokens.dropFirst()
        // Each container is taken out of `self` while it changes, so that one this document alone holds is
        // changed in place rather than copied (a document applied to is copied once, on its first change).
        // On an error the document is left part-way: `apply` throws it away.
        switch self {
        case .object(var members):
            self = .null
            if rest.isEmpty {
                members[token] = value
            } else {
                guard var child = members[token] else { throw .pathNotFound(pointer.description) }
                members[token] = nil  // keeps the child uniquely referenced while it changes
                try child.insert(value, at: rest, pointer: pointer)
                members[token] = child
            }
            self = .object(members)
        case .array(var elements):
            self = .null
            let index = token == "-" ? elements.count : Self.arrayIndex(token, count: elements.count)
            guard let index else { throw .pathNotFound(pointer.description) }
            if rest.isEmpty {
                elements.insert(value, at: index)
            } else {
                guard index < elements.count else { throw .pathNotFound(pointer.description) }
                var child = elements[index]
                elements[index] = .null
                try child.insert(value, at: rest, pointer: pointer)
                elements[index] = child
            }
            self = .array(elements)
        default:
            throw .pathNotFound(pointer.description)
        }
    }

    /// RFC 6902's `replace` (a `remove` and an `add` at one existing location) in one walk down the document.
    fileprivate mutating func replace(at tokens: ArraySlice<String>, with value: JSONValue, pointer: JSONPointer) throws(JSONPatchError) {
        guard let token = tokens.first else {
            self = value
            return
        }
        let rest = tokens.dropFirst()
        switch self {  // containers taken out of `self` while they change, as in `insert`
        case .object(var members):
            self = .null
            guard let index = members.index(forKey: token) else { throw .pathNotFound(pointer.description) }
            try members.values[index].replace(at: rest, with: value, pointer: pointer)
            self = .object(members)
        case .array(var elements):
            self = .null
            guard let index = Self.arrayIndex(token, count: elements.count), index < elements.count else {
                throw .pathNotFound(pointer.description)
            }
            try elements[index].replace(at: rest, with: value, pointer: pointer)
            self = .array(elements)
        default:
            throw .pathNotFound(pointer.description)
        }
    }

    fileprivate mutating func remove(at tokens: ArraySlice<String>, pointer: JSONPointer) throws(JSONPatchError) -> JSONValue {
        guard let token = tokens.first else {
            let removed = self
            self = .null
            return removed
        }
        let rest = tokens.dropFirst()
        switch self {  // containers taken out of `self` while they change, as in `insert`
        case .object(var members):
            self = .null
            guard var child = members.removeValue(forKey: token) else { throw .pathNotFound(pointer.description) }
            if rest.isEmpty {
                self = .object(members)
                return child
            }
            let removed = try child.remove(at: rest, pointer: pointer)
            members[token] = child
            self = .object(members)
            return removed
        case .array(var elements):
            self = .null
            guard let index = Self.arrayIndex(token, count: elements.count), index < elements.count else {
                throw .pathNotFound(pointer.description)
            }
            if rest.isEmpty {
                let removed = elements.remove(at: index)
                self = .array(elements)
                return removed
            }
            var child = elements[index]
            elements[index] = .null
            let removed = try child.remove(at: rest, pointer: pointer)
            elements[index] = child
            self = .array(elements)
            return removed
        default:
            throw .pathNotFound(pointer.description)
        }
    }

    /// Equality as RFC 6902's `test` defines it: numbers compare by value (`1` equals `1.0`).
    fileprivate func numericallyEquals(_ other: JSONValue) -> Bool {
        switch (self, other) {
        case (.integer(let a), .double(let b)), (.double(let b), .integer(let a)): Double(a) == b
        case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.numericallyEquals($1) }
        case (.object(let a), .object(let b)):
            a.count == b.count && a.allSatisfy { key, value in b[key].map(value.numericallyEquals) ?? false }
        default: self == other
        }
    }
}
