import CJansson

#if canImport(Glibc)
import Glibc
#endif

// The bridge between `JSONValue` and jansson. This file is the only place in Storefront that holds a
// `json_t*`: each pointer lives inside one function and is released there (`defer`), and every call says
// whether the reference it handles is new, borrowed or stolen.

extension JSONValue {
    /// Parses one JSON text (any value at the top level, not only objects and arrays).
    ///
    /// Strings may contain `\u0000`. Integers too large for 64 bits are read as doubles rather than
    /// failing the whole text, so that a request with an out-of-range number still has a readable id.
    /// In such a text every number is read as a double first; those that are whole and below 2^53 in
    /// magnitude come back as exactly the integers written, larger ones stay doubles (a double cannot
    /// tell 2^53 + 1 from 2^53, and an id must never be answered as a neighbouring number).
    /// Nesting deeper than ``maximumNestingDepth`` is an error (jansson's guard against deep recursion).
    ///
    /// - Parameter bytes: UTF-8 text; invalid UTF-8 is an error.
    /// - Throws: ``JSONParseError`` with jansson's text and position.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(JSONParseError) {
        let flags = JSON_DECODE_ANY | JSON_ALLOW_NUL
        var error = json_error_t()
        let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
        // json_loadb: a new reference, or NULL on error.
        var root = json_loadb(base ?? cj_empty(), bytes.count, Int(flags), &error)
        var integersReadAsReals = false
        if root == nil, json_error_code(&error) == json_error_numeric_overflow {
            // Second try with every integer read as a real; whole reals that fit go back to integers.
            root = json_loadb(base ?? cj_empty(), bytes.count, Int(flags | JSON_DECODE_INT_AS_REAL), &error)
            integersReadAsReals = true
        }
        guard let root else {
            guard json_error_code(&error) != json_error_stack_overflow else {
                // jansson's own, higher depth limit: say which limit applies.
                throw JSONParseError(text: Self.tooDeep, line: Int(error.line), column: Int(error.column), position: Int(error.position))
            }
            throw JSONParseError(error)
        }
        defer { cj_decref(root) }
        // The depth is checked while converting (one walk, not a walk to measure and one to convert).
        guard let value = Self.converting(root, integersReadAsReals: integersReadAsReals, levelsLeft: Self.maximumNestingDepth) else {
            throw JSONParseError(text: Self.tooDeep, line: -1, column: -1, position: -1)
        }
        self = value
    }

    /// The message of a text nested deeper than ``maximumNestingDepth``.
    private static let tooDeep = "nesting deeper than \(maximumNestingDepth) levels"

    /// Parses one JSON text held in a byte array. See ``init(parsing:)-(UnsafeRawBufferPointer)``.
    public init(parsing bytes: [UInt8]) throws(JSONParseError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) in try JSONValue(parsing: buffer) }
        }
        self = try result.get()
    }

    /// Parses one JSON text held in a string. See ``init(parsing:)-(UnsafeRawBufferPointer)``.
    public init(parsing text: String) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8))
    }

    /// How deeply arrays and objects may nest in a parsed text. jansson itself stops at 2048; this
    /// lower bound keeps every recursive walk over a value (conversion, equality, diffing) shallow
    /// enough for any thread's stack, including under AddressSanitizer. No message of this protocol
    /// comes near it.
    public static let maximumNestingDepth = 256

    /// Converts a jansson value to Swift, or returns nil when its arrays and objects nest more than
    /// `levelsLeft` levels deep (the walk stops there, so the recursion is never deeper than that plus one).
    /// `json` is borrowed: its reference count is not touched.
    private static func converting(
        _ json: UnsafeMutablePointer<json_t>, integersReadAsReals: Bool, levelsLeft: Int
    ) -> JSONValue? {
        switch cj_typeof(json) {
        case JSON_OBJECT:
            guard levelsLeft > 0 else { return nil }
            var members = [String: JSONValue](minimumCapacity: json_object_size(json))
            var iterator = cj_object_iter(json)
            while let entry = iterator {
                let key = String(cString: json_object_iter_key(entry), count: json_object_iter_key_len(entry))
                // json_object_iter_value: borrowed.
                if let member = json_object_iter_value(entry) {
                    guard let value = converting(member, integersReadAsReals: integersReadAsReals, levelsLeft: levelsLeft - 1)
                    else { return nil }
                    members[key] = value
                } else {
                    members[key] = .null
                }
                iterator = json_object_iter_next(json, entry)
            }
            return .object(members)
        case JSON_ARRAY:
            guard levelsLeft > 0 else { return nil }
            let count = json_array_size(json)
            var elements = [JSONValue]()
            elements.reserveCapacity(count)
            for index in 0..<count {
                // json_array_get: borrowed.
                if let element = json_array_get(json, index) {
                    guard let value = converting(element, integersReadAsReals: integersReadAsReals, levelsLeft: levelsLeft - 1)
                    else { return nil }
                    elements.append(value)
                } else {
                    elements.append(.null)
                }
            }
            return .array(elements)
        case JSON_STRING:
            return .string(String(cString: json_string_value(json), count: json_string_length(json)))
        case JSON_INTEGER:
            return .integer(Int64(json_integer_value(json)))
        case JSON_REAL:
            let real = json_real_value(json)
            if integersReadAsReals, let integer = Int64(exactly: real), integer.magnitude < 1 << 53 {
                return .integer(integer)
            }
            return .double(real)
        case JSON_TRUE:
            return .bool(true)
        case JSON_FALSE:
            return .bool(false)
        default:
            return .null
        }
    }

    /// Builds the jansson tree for this value and returns a new reference the caller must release.
    /// Non-finite doubles, which JSON cannot express, become `null`.
    func makeJansson() -> UnsafeMutablePointer<json_t> {
        switch self {
        case .null:
            return json_null()
        case .bool(let value):
            return cj_boolean(value ? 1 : 0)
        case .integer(let value):
            return json_integer(json_int_t(value))
        case .double(let value):
            return json_real(value) ?? json_null()
        case .string(let value):
            return Self.makeJanssonString(value)
        case .array(let elements):
            let array = json_array()!
            for element in elements {
                // json_array_append_new steals the new reference.
                json_array_append_new(array, element.makeJansson())
            }
            return array
        case .object(let members):
            let object = json_object()!
            for (key, value) in members {
                var key = key
                key.withUTF8 { utf8 in
                    utf8.withMemoryRebound(to: CChar.self) { chars in
                        // json_object_setn_new_nocheck steals the value's new reference.
                        _ = json_object_setn_new_nocheck(
                            object, chars.baseAddress ?? cj_empty(), chars.count, value.makeJansson())
                    }
                }
            }
            return object
        }
    }

    private static func makeJanssonString(_ value: String) -> UnsafeMutablePointer<json_t> {
        var value = value
        return value.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { chars in
                // json_stringn_nocheck copies the bytes into a new reference; Swift strings are valid UTF-8.
                json_stringn_nocheck(chars.baseAddress ?? cj_empty(), chars.count) ?? json_null()
            }
        }
    }

    /// Appends jansson's compact serialisation (`json_dump_callback` with `JSON_COMPACT | JSON_ENCODE_ANY |
    /// JSON_SORT_KEYS`) to `buffer`: the reference ``serialize(into:)`` must equal, byte for byte (tests).
    package func janssonSerialize(into buffer: inout [UInt8]) {
        let root = makeJansson()
        defer { cj_decref(root) }
        let flags = JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS
        withUnsafeMutablePointer(to: &buffer) { output in
            // json_dump_callback borrows `root` and calls back with chunks of the text.
            _ = json_dump_callback(root, { chunk, size, context in
                guard let chunk, let context else { return -1 }
                let output = context.assumingMemoryBound(to: [UInt8].self)
                chunk.withMemoryRebound(to: UInt8.self, capacity: size) { bytes in
                    output.pointee.append(contentsOf: UnsafeBufferPointer(start: bytes, count: size))
                }
                return 0
            }, output, Int(flags))
        }
    }

    /// An indented serialisation (two spaces, keys sorted), for files people read.
    public func prettyPrinted() -> String {
        let root = makeJansson()
        defer { cj_decref(root) }
        // json_dumps returns a new malloc'd string (or NULL) that the caller frees.
        guard let text = json_dumps(root, Int(cj_indent_flag(2)) | Int(JSON_ENCODE_ANY | JSON_SORT_KEYS)) else { return "null" }
        defer { free(text) }
        return String(cString: text)
    }

    /// The compact serialisation as bytes. See ``serialize(into:)``.
    public func serialized() -> [UInt8] {
        var buffer = [UInt8]()
        serialize(into: &buffer)
        return buffer
    }

    /// The compact serialisation as a string. See ``serialize(into:)``.
    public func serializedString() -> String {
        String(decoding: serialized(), as: UTF8.self)
    }
}

extension String {
    /// A string from `count` bytes of valid UTF-8 at `pointer` (NUL bytes included).
    fileprivate init(cString pointer: UnsafePointer<CChar>?, count: Int) {
        guard let pointer, count > 0 else {
            self = ""
            return
        }
        self = pointer.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
            String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        }
    }
}

extension JSONParseError {
    /// Copies jansson's error record.
    fileprivate init(_ error: json_error_t) {
        var error = error
        let text = withUnsafeBytes(of: &error.text) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        self.init(text: text, line: Int(error.line), column: Int(error.column), position: Int(error.position))
    }
}
