/// What one fuzz iteration did and every invariant it found broken.
public struct FuzzReport: Sendable, CustomStringConvertible {
    /// Broken invariants, one sentence each; empty when the server behaved.
    public var violations: [String] = []
    /// Frames handed to the connection (messages and framing errors).
    public var framesDispatched = 0
    /// Messages the server wrote (a batch answer counts once).
    public var messagesWritten = 0
    /// ViewModels open when the input ended.
    public var viewModelsOpen = 0
    /// Whether the client sent `exit` (the server reads no input after it).
    public var exited = false
    /// Times the server stopped reading input still open (flow control: the harness's client reads all
    /// output at once, so here it is requests in flight at their limit).
    public var readsHeldBack = 0
    /// Everything the server wrote in answer to the input (not the harness's own closing requests).
    public var output: [UInt8] = []

    /// Whether no invariant was broken.
    public var passed: Bool { violations.isEmpty }

    /// A summary line, then one line per violation.
    public var description: String {
        let summary = "\(framesDispatched) frames, \(messagesWritten) messages written, \(viewModelsOpen) ViewModels open"
            + (readsHeldBack > 0 ? ", reading held back \(readsHeldBack) times" : "") + (exited ? ", exited" : "")
        return ([summary] + violations.map { "  violation: \($0)" }).joined(separator: "\n")
    }
}
