/// Why jansson could not parse a text, with where it stopped.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// jansson's explanation, e.g. `"'[' or '{' expected near 'x'"`.
    public var text: String
    /// The 1-based line of the error, or -1 when unknown.
    public var line: Int
    /// The 1-based column of the error (in characters), or -1 when unknown.
    public var column: Int
    /// The byte offset of the error from the start of the input, or -1 when unknown.
    public var position: Int

    /// Creates an error from its parts.
    public init(text: String, line: Int, column: Int, position: Int) {
        self.text = text
        self.line = line
        self.column = column
        self.position = position
    }

    /// `"<text> at line L, column C (byte P)"`, or only the text when the position is unknown.
    public var description: String {
        line < 0 ? text : "\(text) at line \(line), column \(column) (byte \(position))"
    }
}
