import Randomness
import JSONRPC
import JSONRPCTransport
import Testing

/// The decoder must give the same events however its input is cut into reads.
@Suite struct FrameDecoderSplitTests {
    struct Input: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        var choice: FramingChoice
        var maxMessageBytes = 64

        var bytes: [UInt8] { Array(text.utf8) }
        var testDescription: String { "\(name) (\(choice))" }
    }

    static let inputs: [Input] = [
        Input(name: "lines", text: "{\"id\":1}\n{\"id\":2}\r\n\n  \r\n\t\n[{\"id\":3}]\n{\"tail\":", choice: .ndjson),
        Input(name: "multi-byte lines", text: "{\"n\":\"ü😀日本\"}\r\n{\"n\":\"é\"}\n", choice: .ndjson),
        Input(name: "oversized line", text: "[1]\n" + String(repeating: "7", count: 90) + "\r\n[2]\n", choice: .ndjson),
        Input(name: "line of exactly the limit", text: "[" + String(repeating: "1", count: 62) + "]\r\n[2]\n", choice: .ndjson),
        Input(name: "line one over the limit", text: "[" + String(repeating: "1", count: 63) + "]\r\n[2]\n", choice: .ndjson),
        Input(name: "oversized blank line", text: String(repeating: " ", count: 80) + "\n[2]\n", choice: .ndjson),
        Input(name: "frames", text: lspFrame("{\"n\":\"ü😀\"}") + lspFrame("[]", headerEnd: "\n\n") + "\r\n" + lspFrame("{}"), choice: .lsp),
        Input(name: "extra headers", text: "Content-Type: x\r\ncontent-length: 2\r\n\r\n{}content-LENGTH:3\r\n\r\n[1]", choice: .lsp),
        Input(name: "bad headers", text: "Content-Length: -1\r\n\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
            + "Content-Type: a\r\n\r\n[]Content-Length 1\r\n\r\n1" + lspFrame("[9]"), choice: .lsp),
        Input(name: "junk", text: "garbage\r\n" + lspFrame("[1]") + "cont\nContent-Lengthy: 1\r\n\r\nx" + lspFrame("[2]")
            + "tail without header", choice: .lsp),
        Input(name: "lying lengths", text: "Content-Length: 5\r\n\r\n{\"a\":1}" + lspFrame("{}")
            + "Content-Length: 30\r\n\r\n{}" + lspFrame("[2]") + lspFrame("[3]") + lspFrame("[4]"), choice: .lsp),
        Input(name: "oversized body", text: "Content-Length: 100\r\n\r\n" + String(repeating: "z", count: 100) + lspFrame("[5]"), choice: .lsp),
        Input(name: "auto lines", text: "\r\n \n{\"id\":1}\n[2]\n", choice: .auto),
        Input(name: "auto frames", text: "\n\r\n" + lspFrame("{\"id\":1}") + "[junk]\n" + lspFrame("[2]"), choice: .auto),
        Input(name: "auto blank", text: " \r\n\t\n", choice: .auto),
    ]

    @Test(arguments: inputs)
    func everyTwoWaySplitGivesTheSameEvents(_ input: Input) {
        let bytes = input.bytes
        let whole = decode([bytes], choice: input.choice, maxMessageBytes: input.maxMessageBytes)
        for cut in 0...bytes.count {
            let split = decode([bytes[..<cut], bytes[cut...]], choice: input.choice, maxMessageBytes: input.maxMessageBytes)
            #expect(split == whole, "cut at byte \(cut)")
            if split != whole { return }
        }
    }

    @Test(arguments: inputs)
    func byteByByteGivesTheSameEvents(_ input: Input) {
        let bytes = input.bytes
        let whole = decode([bytes], choice: input.choice, maxMessageBytes: input.maxMessageBytes)
        #expect(decode(bytes.map { [$0] }, choice: input.choice, maxMessageBytes: input.maxMessageBytes) == whole)
    }

    @Test(arguments: inputs)
    func seededRandomChunksGiveTheSameEvents(_ input: Input) {
        let bytes = input.bytes
        let whole = decode([bytes], choice: input.choice, maxMessageBytes: input.maxMessageBytes)
        var generator = SeededRandom(seed: 0x5EED)
        for round in 0..<200 {
            let chunks = randomChunks(of: bytes, maxLength: [2, 5, 17, 64][round % 4], using: &generator)
            let decoded = decode(chunks, choice: input.choice, maxMessageBytes: input.maxMessageBytes)
            #expect(decoded == whole, "round \(round): chunks \(chunks.map(\.count))")
            if decoded != whole { return }
        }
    }

    /// A header block of `padding` bytes plus 23 (exactly the 8 KiB limit at 8169), then a frame.
    static func headerBlock(padding: Int) -> [UInt8] {
        Array(("Content-Length: 3\r\nX: " + String(repeating: "a", count: padding) + "\r\n\r\n[1]" + lspFrame("[2]")).utf8)
    }

    @Test(arguments: [8_169, 8_170, 8_171, 9_000])
    func aHeaderBlockOverTheLimitIsRefusedHoweverItArrives(padding: Int) {
        let bytes = Self.headerBlock(padding: padding)
        let whole = decode([bytes], choice: .lsp)
        let first: Decoded.Event = padding <= 8_169 ? .message("[1]") : .error(.invalidHeader("header block longer than 8192 bytes"))
        #expect(whole.events == [first, .message("[2]")])
        let cuts = Array(stride(from: 0, through: bytes.count, by: 61)) + Array(8_180...8_200)
        for cut in cuts where cut <= bytes.count {
            #expect(decode([bytes[..<cut], bytes[cut...]], choice: .lsp) == whole, "cut at byte \(cut)")
        }
        var generator = SeededRandom(seed: UInt64(padding))
        for round in 0..<20 {
            let chunks = randomChunks(of: bytes, maxLength: [3, 64, 700, 5_000][round % 4], using: &generator)
            #expect(decode(chunks, choice: .lsp) == whole, "chunks \(chunks.map(\.count))")
        }
    }

    @Test func theInputsCoverMessagesAndErrors() {
        let events = Self.inputs.flatMap { decode([$0.bytes], choice: $0.choice, maxMessageBytes: $0.maxMessageBytes).events }
        #expect(events.contains { if case .message = $0 { true } else { false } })
        #expect(events.contains(.error(.messageTooLarge(limit: 64))))
        #expect(events.contains { if case .error(.invalidHeader) = $0 { true } else { false } })
        #expect(events.contains { if case .error(.unexpectedBytes) = $0 { true } else { false } })
    }
}
