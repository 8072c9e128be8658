import JSONRPC

#if canImport(Glibc)
import Glibc
#endif

/// Splits an input byte stream into messages: a pure byte parser with no I/O, so that it can be fed one
/// byte at a time or in chunks of any size and must give the same result.
///
/// Memory is bounded: a message longer than `maxMessageBytes` is reported once and its bytes are skipped
/// as they arrive rather than buffered.
public struct FrameDecoder: Sendable {
    /// One result of decoding.
    public enum Event: Equatable, Sendable {
        /// A complete message body (blank lines of newline-delimited input are not messages).
        case message(ArraySlice<UInt8>)
        /// Bytes that could not be taken as a message; decoding goes on after them.
        case error(FramingError)
    }

    private enum State: Sendable {
        /// Auto mode before the first non-blank byte.
        case detecting
        /// Newline-delimited: reading a line.
        case line
        /// Newline-delimited: skipping the rest of an oversized line.
        case skippingLine
        /// Content-Length: reading a header block.
        case headers
        /// Content-Length: waiting for a body of this many bytes.
        case body(Int)
        /// Content-Length: skipping this many bytes of an oversized body.
        case skippingBody(Int)
        /// Content-Length: skipping a header block over the size limit (reported when it was found too
        /// long), up to the next `Content-Length` header.
        case skippingHeader
        /// Content-Length: skipping bytes that are not a header, this many so far. They run to the end of
        /// their line or to the next `Content-Length` header and are reported once, when they end, so
        /// that the report does not depend on how the bytes arrived.
        case skippingJunk(Int)
    }

    /// The framing in use, or `nil` while `auto` has not yet seen a non-blank byte.
    public private(set) var framing: Framing?
    /// The largest message body accepted, in bytes.
    public let maxMessageBytes: Int
    private static let maxHeaderBytes = 8 * 1024

    private var buffer: [UInt8] = []
    private var start = 0
    /// Newline-delimited: how many bytes after `start` are known to hold no newline, so that a long line
    /// arriving in many reads is scanned once, not from its start on every read.
    private var scannedLineBytes = 0
    private var state: State

    /// A decoder for one framing, or for whichever the first bytes show.
    ///
    /// - Parameters:
    ///   - choice: the framing, or `auto`.
    ///   - maxMessageBytes: the largest message body; at most `Int.max / 2` is used, so that the bounds
    ///     computed from it cannot overflow.
    public init(choice: FramingChoice, maxMessageBytes: Int) {
        self.maxMessageBytes = min(maxMessageBytes, Int.max / 2)
        switch choice {
        case .auto:
            framing = nil
            state = .detecting
        case .ndjson:
            framing = .newlineDelimited
            state = .line
        case .lsp:
            framing = .contentLength
            state = .headers
        }
    }

    /// Bytes received and not yet returned as messages or skipped.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 65_536, start * 2 > buffer.count {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        array.withUnsafeBytes { append($0) }
    }

    /// The next message or error, or `nil` when more bytes are needed.
    public mutating func next() -> Event? {
        while true {
            switch state {
            case .detecting:
                skipWhitespace()
                guard start < buffer.count else { return nil }
                if isLetter(buffer[start]) {
                    framing = .contentLength
                    state = .headers
                } else {
                    framing = .newlineDelimited
                    state = .line
                }
            case .line:
                guard let newline = find(0x0A, from: start + scannedLineBytes) else {
                    scannedLineBytes = bufferedByteCount
                    // One byte more than the limit may be the `\r` of a `\r\n` ending.
                    guard bufferedByteCount > maxMessageBytes + 1 else { return nil }
                    start = buffer.count
                    scannedLineBytes = 0
                    state = .skippingLine
                    return .error(.messageTooLarge(limit: maxMessageBytes))
                }
                scannedLineBytes = 0
                var end = newline
                if end > start, buffer[end - 1] == 0x0D { end -= 1 }
                let line = buffer[start..<end]
                start = newline + 1
                if line.count > maxMessageBytes { return .error(.messageTooLarge(limit: maxMessageBytes)) }
                if line.allSatisfy(isWhitespace) { continue }
                return .message(line)
            case .skippingLine:
                guard let newline = find(0x0A, from: start) else {
                    start = buffer.count
                    return nil
                }
                start = newline + 1
                state = .line
            case .headers:
                if let event = nextHeaderBlock() { return event }
                if case .headers = state { return nil }
            case .body(let length):
                guard bufferedByteCount >= length else { return nil }
                let body = buffer[start..<start + length]
                start += length
                state = .headers
                return .message(body)
            case .skippingBody(let remaining):
                let skipped = min(remaining, bufferedByteCount)
                start += skipped
                guard skipped == remaining else {
                    state = .skippingBody(remaining - skipped)
                    return nil
                }
                state = .headers
            case .skippingHeader:
                guard let header = findHeaderStart(from: start) else {
                    start = buffer.count
                    return nil
                }
                start = header
                // The buffer may end inside what looks like the start of a header: wait for more bytes.
                guard hasPrefixIgnoringCase("content-length", at: start, partialOK: false) else { return nil }
                state = .headers
            case .skippingJunk(let skipped):
                var index = start
                var ended = false
                scan: while index < buffer.count {
                    if buffer[index] == 0x0A {
                        index += 1
                        ended = true
                        break scan
                    }
                    if buffer[index] | 0x20 == 0x63, hasPrefixIgnoringCase("content-length", at: index, partialOK: true) {
                        // A header, or the buffer ends inside what may be one (then wait for more bytes).
                        ended = hasPrefixIgnoringCase("content-length", at: index, partialOK: false)
                        break scan
                    }
                    index += 1
                }
                let total = skipped + index - start
                start = index
                guard ended else {
                    state = .skippingJunk(total)
                    return nil
                }
                state = .headers
                return .error(.unexpectedBytes(count: total))
            }
        }
    }

    /// Ends the input: call once `next()` has returned `nil` and no more bytes will come. Returns what the
    /// unfinished bytes were: the last line of newline-delimited input, which needs no `\n` at the end of
    /// the input; an error for a Content-Length frame cut short or for junk; `nil` when nothing was left.
    public mutating func finish() -> Event? {
        defer {
            buffer = []
            start = 0
            scannedLineBytes = 0
        }
        switch state {
        case .detecting, .skippingLine, .skippingBody, .skippingHeader:
            return nil  // Nothing, or the rest of something already answered.
        case .line:
            var end = buffer.count
            if end > start, buffer[end - 1] == 0x0D { end -= 1 }
            let line = buffer[start..<end]
            if line.count > maxMessageBytes { return .error(.messageTooLarge(limit: maxMessageBytes)) }
            return line.allSatisfy(isWhitespace) ? nil : .message(line)
        case .headers:
            skipWhitespace()
            return start < buffer.count ? .error(.truncated(received: bufferedByteCount, expected: nil)) : nil
        case .body(let length):
            return .error(.truncated(received: bufferedByteCount, expected: length))
        case .skippingJunk(let skipped):
            return .error(.unexpectedBytes(count: skipped + bufferedByteCount))
        }
    }

    /// Reads one header block if it is complete. Sets `state` to `.body` or `.skippingBody` on success, or
    /// to `.skippingJunk` when the bytes are not a header; returns an error event for a malformed block;
    /// leaves `state` as `.headers` and returns `nil` when more bytes are needed.
    private mutating func nextHeaderBlock() -> Event? {
        skipWhitespace()
        guard start < buffer.count else { return nil }
        // Junk before a header: skip it up to the end of its line or the next Content-Length header.
        if !hasPrefixIgnoringCase("content-", at: start, partialOK: true) {
            state = .skippingJunk(0)
            return nil
        }
        // Too long is decided on the block's own length, whether it has arrived whole or not, so that the
        // answer does not depend on how the bytes arrived. The block ends at the first \n of its
        // terminator, of which the last two bytes buffered may be the start.
        guard let end = findHeaderEnd() else {
            guard bufferedByteCount > Self.maxHeaderBytes + 2 else { return nil }
            return headerBlockTooLong()
        }
        guard end.blockEnd - start <= Self.maxHeaderBytes else { return headerBlockTooLong() }
        let block = String(decoding: buffer[start..<end.blockEnd], as: UTF8.self)
        start = end.bodyStart
        var length: Int?
        for line in block.split(whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }) {
            guard let colon = line.firstIndex(of: ":") else {
                return .error(.invalidHeader("line without a colon: \(line.prefix(60))"))
            }
            let name = line[..<colon].trimmingWhitespace().lowercased()
            let value = line[line.index(after: colon)...].trimmingWhitespace()
            guard name == "content-length" else { continue }
            guard let parsed = Int(value), parsed >= 0, value.allSatisfy(\.isASCIIDigitCharacter) else {
                return .error(.invalidHeader("Content-Length \"\(value.prefix(30))\" is not a non-negative integer"))
            }
            if let length, length != parsed {
                return .error(.invalidHeader("conflicting Content-Length headers \(length) and \(parsed)"))
            }
            length = parsed
        }
        guard let length else { return .error(.invalidHeader("no Content-Length header")) }
        if length > maxMessageBytes {
            state = .skippingBody(length)
            return .error(.messageTooLarge(limit: maxMessageBytes))
        }
        state = .body(length)
        return nil
    }

    /// Reports the header block at `start` as too long and skips it, up to the next `Content-Length`.
    private mutating func headerBlockTooLong() -> Event {
        start += 1
        state = .skippingHeader
        return .error(.invalidHeader("header block longer than \(Self.maxHeaderBytes) bytes"))
    }

    private mutating func skipWhitespace() {
        while start < buffer.count, isWhitespace(buffer[start]) { start += 1 }
    }

    /// The index of the first `byte` at or after `from`.
    private func find(_ byte: UInt8, from: Int) -> Int? {
        guard from < buffer.count else { return nil }
        return buffer.withUnsafeBytes { raw -> Int? in
            guard let found = memchr(raw.baseAddress! + from, Int32(byte), buffer.count - from) else { return nil }
            return UnsafeRawPointer(found) - raw.baseAddress!
        }
    }

    /// The end of the header block starting at `start` (`\r\n\r\n`, or `\n\n` from lenient clients), if
    /// it ends within ``maxHeaderBytes``: a longer block is not found however its bytes arrived.
    private func findHeaderEnd() -> (blockEnd: Int, bodyStart: Int)? {
        var index = start
        let limit = min(buffer.count, start + Self.maxHeaderBytes + 1)
        while index < limit {
            if buffer[index] == 0x0A {
                if index + 1 < buffer.count, buffer[index + 1] == 0x0A { return (index, index + 2) }
                if index + 2 < buffer.count, buffer[index + 1] == 0x0D, buffer[index + 2] == 0x0A {
                    return (index, index + 3)
                }
            }
            index += 1
        }
        return nil
    }

    /// The first position at or after `from` where a `Content-Length` header starts (or may start, when
    /// the buffer ends inside the name): where decoding resumes after junk.
    private func findHeaderStart(from: Int) -> Int? {
        var index = from
        while index < buffer.count {
            if buffer[index] | 0x20 == 0x63, hasPrefixIgnoringCase("content-length", at: index, partialOK: true) {
                return index
            }
            index += 1
        }
        return nil
    }

    /// Whether the bytes at `index` start with `prefix` (ASCII, case-insensitive); with `partialOK`, a
    /// buffer that ends inside the prefix counts as a match so far.
    private func hasPrefixIgnoringCase(_ prefix: String, at index: Int, partialOK: Bool) -> Bool {
        var position = index
        for expected in prefix.utf8 {
            guard position < buffer.count else { return partialOK }
            guard buffer[position] | 0x20 == expected | 0x20 else { return false }
            position += 1
        }
        return true
    }
}

private func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
}

private func isLetter(_ byte: UInt8) -> Bool {
    (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
