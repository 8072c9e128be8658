/// Why bytes on the input stream could not be taken as a message. The stream goes on after each.
public enum FramingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A message longer than the limit; its bytes were skipped without being buffered.
    case messageTooLarge(limit: Int)
    /// A Content-Length header block that is malformed (missing, negative, non-numeric or conflicting
    /// length, a line that is not a header, or a block over 8 KiB). The block was skipped.
    case invalidHeader(String)
    /// Bytes that are not a header where a header block was expected; skipped up to the end of their
    /// line or the next `Content-Length` header, whichever comes first.
    case unexpectedBytes(count: Int)
    /// The input ended inside a message: `received` bytes of a body of `expected` bytes, or of a header
    /// block (`expected` is `nil`).
    case truncated(received: Int, expected: Int?)

    /// A sentence for the error response.
    public var description: String {
        switch self {
        case .messageTooLarge(let limit): "message exceeds the limit of \(limit) bytes and was skipped"
        case .invalidHeader(let detail): "invalid Content-Length header block: \(detail)"
        case .unexpectedBytes(let count): "skipped \(count) bytes that are not a Content-Length header"
        case .truncated(let received, let expected?):
            "the input ended after \(received) of the \(expected) bytes of a message"
        case .truncated(let received, nil):
            "the input ended inside a Content-Length header block (\(received) bytes)"
        }
    }
}
