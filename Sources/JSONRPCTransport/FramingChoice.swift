/// Which framing a server accepts: one of them, or whichever the first bytes show.
public enum FramingChoice: String, Sendable, CaseIterable {
    /// Decide from the first non-blank bytes: a header line means Content-Length, anything else one
    /// message per line.
    case auto
    /// Newline-delimited JSON only.
    case ndjson
    /// Content-Length headers only.
    case lsp
}
