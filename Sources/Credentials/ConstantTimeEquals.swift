import CSodium

/// Whether two byte strings are equal, in a time that depends on their length but not on where they
/// differ (sodium_memcmp), for comparing secrets.
///
/// Strings of different lengths are unequal (found at once: the length is not a secret here).
///
/// - Returns: true when `a` and `b` hold the same bytes.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    guard !a.isEmpty else { return true }
    Sodium.ensureInitialized()
    return sodium_memcmp(a, b, a.count) == 0
}
