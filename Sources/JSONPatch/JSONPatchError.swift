/// Why a JSON Patch could not be read or applied.
public enum JSONPatchError: Error, Equatable, Sendable {
    /// A pointer string is not an RFC 6901 pointer.
    case invalidPointer(String)
    /// An operation object is malformed (unknown `op`, a missing `path`, `value` or `from`).
    case invalidOperation(String)
    /// The pointer names a location that does not exist (or, for `add`, whose parent does not exist).
    case pathNotFound(String)
    /// A `test` operation found a different value.
    case testFailed(String)
}
