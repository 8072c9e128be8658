import Randomness
import JSONRPC
import JSONRPCTransport

/// What a decoder gave for some input: its events, with message bodies copied out, and the framing it
/// settled on.
struct Decoded: Equatable, CustomStringConvertible {
    enum Event: Equatable, CustomStringConvertible {
        case message(String)
        case error(FramingError)

        var description: String {
            switch self {
            case .message(let text): "message(\(text.debugDescription))"
            case .error(let error): "error(\(error))"
            }
        }
    }

    var events: [Event] = []
    var framing: Framing?

    var description: String { "\(framing.map(\.rawValue) ?? "undetected") \(events)" }
}

/// Feeds `chunks` to a fresh decoder, draining it after each one.
func decode(
    _ chunks: some Sequence<some Collection<UInt8>>, choice: FramingChoice, maxMessageBytes: Int = 1 << 20
) -> Decoded {
    var decoder = FrameDecoder(choice: choice, maxMessageBytes: maxMessageBytes)
    var result = Decoded()
    for chunk in chunks {
        decoder.append(chunk)
        while let event = decoder.next() {
            switch event {
            case .message(let body): result.events.append(.message(String(decoding: body, as: UTF8.self)))
            case .error(let error): result.events.append(.error(error))
            }
        }
    }
    result.framing = decoder.framing
    return result
}

/// Feeds `input` in one chunk.
func decode(_ input: String, choice: FramingChoice, maxMessageBytes: Int = 1 << 20) -> Decoded {
    decode([Array(input.utf8)], choice: choice, maxMessageBytes: maxMessageBytes)
}

/// `input` cut into pieces of random lengths between 1 and `maxLength`.
func randomChunks(of input: [UInt8], maxLength: Int, using generator: inout SeededRandom) -> [ArraySlice<UInt8>] {
    var chunks: [ArraySlice<UInt8>] = []
    var start = 0
    while start < input.count {
        let end = min(input.count, start + Int.random(in: 1...maxLength, using: &generator))
        chunks.append(input[start..<end])
        start = end
    }
    return chunks
}

/// A Content-Length frame of `body`, its length counted in UTF-8 bytes.
func lspFrame(_ body: String, headerEnd: String = "\r\n\r\n") -> String {
    "Content-Length: \(body.utf8.count)\(headerEnd)\(body)"
}
