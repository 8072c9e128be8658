import JSONRPC
import JSONRPCTransport
import Testing

/// `FrameDecoder.finish()`, oversized header blocks however they arrive, and limits near `Int.max`.
@Suite struct FrameDecoderEndOfInputTests {
    /// Feeds `input` in one chunk, drains the decoder, then ends the input.
    func decodeToEnd(_ input: String, choice: FramingChoice, maxMessageBytes: Int = 1 << 20) -> [Decoded.Event] {
        var decoder = FrameDecoder(choice: choice, maxMessageBytes: maxMessageBytes)
        decoder.append(Array(input.utf8))
        var events: [FrameDecoder.Event] = []
        while let event = decoder.next() { events.append(event) }
        if let last = decoder.finish() { events.append(last) }
        return events.map {
            switch $0 {
            case .message(let body): .message(String(decoding: body, as: UTF8.self))
            case .error(let error): .error(error)
            }
        }
    }

    @Test func aLastLineWithoutItsNewlineIsAMessage() {
        #expect(decodeToEnd("[1]\n[2]", choice: .ndjson) == [.message("[1]"), .message("[2]")])
        #expect(decodeToEnd("[1]\n[2]\r", choice: .auto) == [.message("[1]"), .message("[2]")])
        #expect(decodeToEnd("[1]\n \t", choice: .ndjson) == [.message("[1]")])
        #expect(decodeToEnd("", choice: .auto) == [])
    }

    @Test func aLastLineOverTheLimitIsReportedOnce() {
        #expect(decodeToEnd(String(repeating: "7", count: 100), choice: .ndjson, maxMessageBytes: 64) == [.error(.messageTooLarge(limit: 64))])
        #expect(decodeToEnd("[1]\n" + String(repeating: "7", count: 65), choice: .ndjson, maxMessageBytes: 64)
            == [.message("[1]"), .error(.messageTooLarge(limit: 64))])
    }

    @Test func aFrameCutByTheEndOfInputIsReported() {
        #expect(decodeToEnd("Content-Length: 10\r\n\r\n{\"a\"", choice: .lsp) == [.error(.truncated(received: 4, expected: 10))])
        #expect(decodeToEnd("Content-Length: 10\r\n\r\n", choice: .auto) == [.error(.truncated(received: 0, expected: 10))])
        #expect(decodeToEnd(lspFrame("[1]") + "Content-Len", choice: .lsp) == [.message("[1]"), .error(.truncated(received: 11, expected: nil))])
        #expect(decodeToEnd(lspFrame("[1]") + "\r\n", choice: .lsp) == [.message("[1]")])
    }

    @Test func junkAtTheEndOfInputIsReportedOnce() {
        #expect(decodeToEnd(lspFrame("[1]") + "garbage", choice: .lsp) == [.message("[1]"), .error(.unexpectedBytes(count: 7))])
        #expect(decodeToEnd("junk Content-Le", choice: .lsp) == [.error(.unexpectedBytes(count: 15))])
    }

    @Test func anOversizedBodyCutByTheEndOfInputIsNotReportedTwice() {
        #expect(decodeToEnd("Content-Length: 100\r\n\r\nabc", choice: .lsp, maxMessageBytes: 64) == [.error(.messageTooLarge(limit: 64))])
    }

    @Test func aHeaderBlockOver8KiBIsRefusedWhetherItArrivesWholeOrInPieces() {
        let input = "Content-Length: 3\r\nX-Padding: \(String(repeating: "a", count: 9_000))\r\n\r\n[1]" + lspFrame("[2]")
        let refused = Decoded.Event.error(.invalidHeader("header block longer than 8192 bytes"))
        #expect(decode(input, choice: .lsp).events == [refused, .message("[2]")])
        let bytes = Array(input.utf8)
        let pieces = decode([bytes[..<4096], bytes[4096...]], choice: .lsp).events
        #expect(pieces.first == refused)
        #expect(pieces.last == .message("[2]"))
        #expect(!pieces.contains(.message("[1]")))
    }

    @Test func aLimitNearIntMaxDoesNotOverflow() {
        var decoder = FrameDecoder(choice: .ndjson, maxMessageBytes: .max)
        decoder.append(Array("[1".utf8))
        #expect(decoder.next() == nil)
        decoder.append(Array("]\n".utf8))
        #expect(decoder.next() == .message(Array("[1]".utf8)[...]))
    }
}
