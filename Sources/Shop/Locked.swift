import Foundation

/// A value guarded by a lock, for the few places where state is shared across threads (the shop's
/// services and the store's fault injector). A class, unlike `Synchronization.Mutex`, so it can sit in
/// collections.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
