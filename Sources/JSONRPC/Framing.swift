/// How messages are delimited on a byte stream.
public enum Framing: String, Sendable, CaseIterable {
    /// One JSON text per line, as MCP's stdio transport (`\n`-terminated; a `\r` before it is ignored).
    case newlineDelimited = "ndjson"
    /// `Content-Length: N\r\n\r\n` followed by N bytes of UTF-8, as LSP.
    case contentLength = "lsp"

    /// Appends `payload` framed this way to `buffer`.
    public func frame(_ payload: some Collection<UInt8>, into buffer: inout [UInt8]) {
        switch self {
        case .newlineDelimited:
            buffer.append(contentsOf: payload)
            buffer.append(0x0A)
        case .contentLength:
            buffer.append(contentsOf: "Content-Length: \(payload.count)\r\n\r\n".utf8)
            buffer.append(contentsOf: payload)
        }
    }
}
