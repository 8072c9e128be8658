import JSONRPC
import JSONRPCTransport

extension FuzzHarness {
    /// The decoder must give the same frames (up to the end of the input) for the input whole and cut into
    /// `chunks`.
    func checkSplitInvariance(_ input: ArraySlice<UInt8>, chunks: [ArraySlice<UInt8>], checker: inout OutputChecker) {
        func frames(_ pieces: [ArraySlice<UInt8>]) -> ([FrameDecoder.Event], Framing?) {
            var decoder = FrameDecoder(choice: .auto, maxMessageBytes: configuration.maxMessageBytes)
            var events: [FrameDecoder.Event] = []
            for piece in pieces {
                decoder.append(piece)
                while let event = decoder.next() { events.append(event) }
            }
            if let last = decoder.finish() { events.append(last) }
            return (events, decoder.framing)
        }
        let whole = frames([input])
        let split = frames(chunks)
        if whole.0 != split.0 || whole.1 != split.1 {
            let index = zip(whole.0, split.0).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(whole.0.count, split.0.count)
            func event(_ events: [FrameDecoder.Event]) -> String {
                guard index < events.count else { return "nothing" }
                switch events[index] {
                case .message(let body): return "message \(OutputChecker.excerpt(body))"
                case .error(let error): return "error \(error)"
                }
            }
            checker.fail("the decoder's frame \(index) is \(event(split.0)) for the input cut \(chunks.map(\.count)), \(event(whole.0)) for it whole")
        }
    }
}
