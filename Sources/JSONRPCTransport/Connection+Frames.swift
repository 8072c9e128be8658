import JSONRPC

extension Connection {
    /// Hands the connection one decoded frame: a message body, or a framing error it answers with id
    /// `null`. Answers go out in `framing` (the framing the client spoke) once it is known.
    public func receive(_ frame: FrameDecoder.Event, framing: Framing?) {
        if let framing { outbox.framing = framing }
        switch frame {
        case .message(let body): receive(body)
        case .error(let error): receive(framingError: error)
        }
    }
}
