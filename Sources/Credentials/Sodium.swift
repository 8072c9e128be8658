import CSodium

/// libsodium's one-time set-up, done before the first call into it.
enum Sodium {
    /// sodium_init(), run once per process on first use (a `static let` is initialized exactly once, even
    /// when several threads reach it together). It picks the fastest implementations for this CPU and
    /// opens the system's random source; it returns 1 when libsodium was already initialized (by another
    /// library in the process), which is fine, and -1 only when it cannot work at all.
    private static let initialized: Void = {
        precondition(sodium_init() >= 0, "libsodium could not be initialized (sodium_init() returned -1)")
    }()

    /// Makes sure sodium_init() has run. Cheap after the first call.
    static func ensureInitialized() {
        _ = initialized
    }
}
