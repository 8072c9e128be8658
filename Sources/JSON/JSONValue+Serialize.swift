#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension JSONValue {
    /// Appends the compact serialisation (no spaces, no newlines, keys sorted) to `buffer`.
    ///
    /// Written in Swift straight into the buffer, byte for byte what jansson's `json_dumps` writes with
    /// `JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS` (``janssonSerialize(into:)``, checked against it
    /// in the tests): keys in byte order, `"`, `\` and control characters escaped (`\b \f \n \r \t`, others as
    /// `\u00XX`), everything else as UTF-8, reals as `%.17g` with `.0` added when they would read back as
    /// integers, non-finite reals as `null`. Building a jansson tree for each message and dumping it cost as
    /// much as the rest of a notification.
    ///
    /// The output never contains a raw newline, so it can be written as one line of newline-delimited JSON.
    public func serialize(into buffer: inout [UInt8]) {
        switch self {
        case .null:
            buffer.append(contentsOf: Self.nullBytes)
        case .bool(let value):
            buffer.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
        case .integer(let value):
            Self.appendInteger(value, to: &buffer)
        case .double(let value):
            Self.appendReal(value, to: &buffer)
        case .string(let value):
            Self.appendString(value, to: &buffer)
        case .array(let elements):
            buffer.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                element.serialize(into: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let members):
            buffer.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in Self.sortedMembers(members) {
                if !first { buffer.append(UInt8(ascii: ",")) }
                first = false
                Self.appendString(key, to: &buffer)
                buffer.append(UInt8(ascii: ":"))
                value.serialize(into: &buffer)
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }

    private static let nullBytes = Array("null".utf8)
    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)

    /// The members in the order jansson sorts keys, by their UTF-8 bytes (String's `<` compares characters),
    /// each with its value (looking each value up by its sorted key hashed every key a second time).
    private static func sortedMembers(_ members: [String: JSONValue]) -> [(key: String, value: JSONValue)] {
        if members.count == 1 { return [members.first!] }
        return members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    private static func appendInteger(_ value: Int64, to buffer: inout [UInt8]) {
        if value >= 0 && value < 10 {
            buffer.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        // The digits from the last, into 20 bytes of stack (Int64.min has 19 and its sign): no String made.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// jansson's `jsonp_dtostr`: `%.17g`, `.0` appended when there is neither `.` nor `e`, the exponent's
    /// `+` and leading zeros removed.
    private static func appendReal(_ value: Double, to buffer: inout [UInt8]) {
        guard value.isFinite else {
            // json_real refuses these; the tree held null instead.
            buffer.append(contentsOf: nullBytes)
            return
        }
        var text = [UInt8](repeating: 0, count: 64)
        let length = text.withUnsafeMutableBufferPointer { bytes in
            withVaList([value]) { arguments in
                bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    Int(vsnprintf($0, bytes.count, "%.17g", arguments))
                }
            }
        }
        var digits = Array(text[0..<max(0, min(length, text.count - 1))])
        if !digits.contains(UInt8(ascii: ".")) && !digits.contains(UInt8(ascii: "e")) {
            digits.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "0")])
        }
        if let e = digits.firstIndex(of: UInt8(ascii: "e")) {
            var start = e + 1
            var end = start + 1
            if start < digits.count, digits[start] == UInt8(ascii: "-") { start += 1 }
            while end < digits.count, digits[end] == UInt8(ascii: "0") { end += 1 }
            if end > start, end <= digits.count { digits.removeSubrange(start..<end) }
        }
        buffer.append(contentsOf: digits)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func appendString(_ value: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        appendEscaped(value, to: &buffer)
        buffer.append(UInt8(ascii: "\""))
    }

    /// Appends `value` escaped as the inside of a JSON string (without the quotes), as ``serialize(into:)``
    /// writes strings: for serialisers that write a string in pieces (a JSON Pointer's tokens).
    public static func appendEscaped(_ value: String, to buffer: inout [UInt8]) {
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                if runStart < index { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                runStart = index + 1
                buffer.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
                case 0x08: buffer.append(UInt8(ascii: "b"))
                case 0x0C: buffer.append(UInt8(ascii: "f"))
                case 0x0A: buffer.append(UInt8(ascii: "n"))
                case 0x0D: buffer.append(UInt8(ascii: "r"))
                case 0x09: buffer.append(UInt8(ascii: "t"))
                default:
                    buffer.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
                }
            }
            if runStart < utf8.count { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
    }
}
