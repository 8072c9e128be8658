import JSONRPC
import JSONRPCTransport
import Testing

@Suite struct FrameDecoderTests {
    // MARK: Newline-delimited

    @Test func splitsLinesAndSkipsBlankOnes() {
        let decoded = decode("{\"id\":1}\n{\"id\":2}\r\n\n   \r\n\t\n{\"id\":3}\n", choice: .ndjson)
        #expect(decoded == Decoded(events: [.message(#"{"id":1}"#), .message(#"{"id":2}"#), .message(#"{"id":3}"#)], framing: .newlineDelimited))
    }

    @Test func stripsOnlyTheCarriageReturnBeforeTheNewline() {
        let decoded = decode(" {\"a\":\"\\r\"} \r\n", choice: .ndjson)
        #expect(decoded.events == [.message(#" {"a":"\r"} "#)])
    }

    @Test func holdsAnUnterminatedLineUntilItsNewline() {
        var decoder = FrameDecoder(choice: .ndjson, maxMessageBytes: 1024)
        decoder.append(Array(#"{"id":1}"#.utf8))
        #expect(decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 8)
        decoder.append([0x0A])
        #expect(decoder.next() == .message(ArraySlice(#"{"id":1}"#.utf8)))
        #expect(decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func keepsMultiByteCharactersWhole() {
        #expect(decode("{\"name\":\"ü😀日本\"}\n", choice: .ndjson).events == [.message(#"{"name":"ü😀日本"}"#)])
    }

    @Test func reportsAnOversizedLineOnceAndServesTheNext() {
        let long = "{\"pad\":\"" + String(repeating: "x", count: 100) + "\"}"
        let decoded = decode("{\"id\":1}\n\(long)\r\n{\"id\":2}\n", choice: .ndjson, maxMessageBytes: 64)
        #expect(decoded.events == [.message(#"{"id":1}"#), .error(.messageTooLarge(limit: 64)), .message(#"{"id":2}"#)])
    }

    @Test func acceptsALineOfExactlyTheLimitEndedByCarriageReturnNewline() {
        let line = "[" + String(repeating: "1", count: 14) + "]"
        #expect(line.utf8.count == 16)
        #expect(decode([Array("\(line)\r\n".utf8)], choice: .ndjson, maxMessageBytes: 16).events == [.message(line)])
        let byteByByte = Array("\(line)\r\n".utf8).map { [$0] }
        #expect(decode(byteByByte, choice: .ndjson, maxMessageBytes: 16).events == [.message(line)])
    }

    @Test func buffersLittleWhileAnOversizedLineStreamsIn() {
        let limit = 1024
        var decoder = FrameDecoder(choice: .ndjson, maxMessageBytes: limit)
        var events: [FrameDecoder.Event] = []
        var largestBuffer = 0
        func feed(_ bytes: [UInt8]) {
            decoder.append(bytes)
            while let event = decoder.next() { events.append(event) }
            largestBuffer = max(largestBuffer, decoder.bufferedByteCount)
        }
        feed(Array(#"{"pad":""#.utf8))
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        for _ in 0..<256 { feed(chunk) }  // 1 MiB on one line
        feed(Array("\"}\n{\"id\":2}\n".utf8))
        #expect(events == [.error(.messageTooLarge(limit: limit)), .message(ArraySlice(#"{"id":2}"#.utf8))])
        #expect(largestBuffer <= limit + 1 + chunk.count)
        #expect(decoder.bufferedByteCount == 0)
    }

    // MARK: Content-Length

    @Test func readsContentLengthFrames() {
        let decoded = decode(lspFrame(#"{"id":1}"#) + lspFrame(#"{"id":2}"#), choice: .lsp)
        #expect(decoded == Decoded(events: [.message(#"{"id":1}"#), .message(#"{"id":2}"#)], framing: .contentLength))
    }

    @Test func countsContentLengthInUTF8Bytes() {
        let body = #"{"name":"ü😀日本"}"#
        #expect(body.utf8.count == 23 && body.count == 15)
        var framed: [UInt8] = []
        Framing.contentLength.frame(Array(body.utf8), into: &framed)
        #expect(String(decoding: framed, as: UTF8.self) == "Content-Length: 23\r\n\r\n\(body)")
        #expect(decode([framed, Array(lspFrame("{}").utf8)], choice: .lsp).events == [.message(body), .message("{}")])
    }

    @Test func acceptsLenientHeaderBlocks() {
        let input = "content-length: 2\n\n{}"  // lower case, bare newlines
            + "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length:   3  \r\n\r\n[1]"
            + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n[]"  // duplicated, agreeing
            + "\r\n\r\n" + lspFrame("{\"id\":4}")  // blank lines between frames
        #expect(decode(input, choice: .lsp).events == [.message("{}"), .message("[1]"), .message("[]"), .message(#"{"id":4}"#)])
    }

    @Test func acceptsAnEmptyBody() {
        #expect(decode("Content-Length: 0\r\n\r\n" + lspFrame("{}"), choice: .lsp).events == [.message(""), .message("{}")])
    }

    @Test func rejectsBadLengthsAndResyncsToTheNextHeader() {
        let next = lspFrame(#"{"id":9}"#)
        let cases: [(String, [Decoded.Event])] = [
            ("Content-Length: -5\r\n\r\n" + next,
             [.error(.invalidHeader(#"Content-Length "-5" is not a non-negative integer"#)), .message(#"{"id":9}"#)]),
            ("Content-Length: +2\r\n\r\n{}" + next,
             [.error(.invalidHeader(#"Content-Length "+2" is not a non-negative integer"#)), .error(.unexpectedBytes(count: 2)), .message(#"{"id":9}"#)]),
            ("Content-Length: two\r\n\r\n{}" + next,
             [.error(.invalidHeader(#"Content-Length "two" is not a non-negative integer"#)), .error(.unexpectedBytes(count: 2)), .message(#"{"id":9}"#)]),
            ("Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}" + next,
             [.error(.invalidHeader("conflicting Content-Length headers 2 and 3")), .error(.unexpectedBytes(count: 2)), .message(#"{"id":9}"#)]),
            ("Content-Type: application/json\r\n\r\n{}" + next,
             [.error(.invalidHeader("no Content-Length header")), .error(.unexpectedBytes(count: 2)), .message(#"{"id":9}"#)]),
            ("Content-Length 2\r\n\r\n{}" + next,
             [.error(.invalidHeader("line without a colon: Content-Length 2")), .error(.unexpectedBytes(count: 2)), .message(#"{"id":9}"#)]),
        ]
        for (input, expected) in cases {
            #expect(decode(input, choice: .lsp).events == expected, "\(input.debugDescription)")
        }
    }

    @Test func skipsJunkBetweenFramesLineByLine() {
        let input = lspFrame("[1]") + "garbage\r\n" + lspFrame("[2]") + "no newline" + lspFrame("[3]")
            + "two\nlines\n" + lspFrame("[4]")
        #expect(decode(input, choice: .lsp).events == [
            .message("[1]"), .error(.unexpectedBytes(count: 9)), .message("[2]"), .error(.unexpectedBytes(count: 10)),
            .message("[3]"), .error(.unexpectedBytes(count: 4)), .error(.unexpectedBytes(count: 6)), .message("[4]"),
        ])
    }

    @Test func answersNewlineDelimitedInputToAContentLengthDecoderAtEachNewline() {
        let line = #"{"jsonrpc":"2.0","id":1,"method":"ping"}"# + "\n"
        #expect(decode(line, choice: .lsp).events == [.error(.unexpectedBytes(count: line.utf8.count))])
    }

    @Test func aLengthThatIsTooShortLeavesJunkBeforeTheNextHeader() {
        let decoded = decode("Content-Length: 5\r\n\r\n{\"a\":1}" + lspFrame("{}"), choice: .lsp)
        #expect(decoded.events == [.message(#"{"a":"#), .error(.unexpectedBytes(count: 2)), .message("{}")])
    }

    @Test func aLengthThatIsTooLongSwallowsTheNextFrameAndResyncsAfterIt() {
        let second = lspFrame(#"{"id":2}"#)
        let input = "Content-Length: 20\r\n\r\n{}" + second + lspFrame(#"{"id":3}"#)
        let swallowed = String(decoding: Array(("{}" + second).utf8).prefix(20), as: UTF8.self)
        #expect(decode(input, choice: .lsp).events == [
            .message(swallowed), .error(.unexpectedBytes(count: #"{"id":2}"#.utf8.count)), .message(#"{"id":3}"#),
        ])
    }

    @Test func reportsAnOversizedBodyOnceAndSkipsItWithoutBufferingIt() {
        let limit = 1024
        var decoder = FrameDecoder(choice: .lsp, maxMessageBytes: limit)
        var events: [FrameDecoder.Event] = []
        var largestBuffer = 0
        func feed(_ bytes: [UInt8]) {
            decoder.append(bytes)
            while let event = decoder.next() { events.append(event) }
            largestBuffer = max(largestBuffer, decoder.bufferedByteCount)
        }
        let size = 1 << 20
        feed(Array("Content-Length: \(size)\r\n\r\n".utf8))
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        for _ in 0..<(size / chunk.count) { feed(chunk) }
        feed(Array(lspFrame("{}").utf8))
        #expect(events == [.error(.messageTooLarge(limit: limit)), .message(ArraySlice("{}".utf8))])
        #expect(largestBuffer <= chunk.count)
    }

    // MARK: Auto-detection

    @Test func detectsTheFramingFromTheFirstNonBlankByte() {
        #expect(decode("\r\n\n{\"id\":1}\n", choice: .auto) == Decoded(events: [.message(#"{"id":1}"#)], framing: .newlineDelimited))
        #expect(decode("[{\"id\":1}]\n", choice: .auto).framing == .newlineDelimited)
        #expect(decode("\r\n\n" + lspFrame(#"{"id":1}"#), choice: .auto) == Decoded(events: [.message(#"{"id":1}"#)], framing: .contentLength))
        #expect(decode(" \r\n\t", choice: .auto) == Decoded(events: [], framing: nil))
    }

    @Test func keepsTheDetectedFraming() {
        // Once Content-Length is detected, a later bare line is junk, not a message.
        let decoded = decode(lspFrame("[1]") + "[2]\n" + lspFrame("[3]"), choice: .auto)
        #expect(decoded == Decoded(events: [.message("[1]"), .error(.unexpectedBytes(count: 4)), .message("[3]")], framing: .contentLength))
    }
}
