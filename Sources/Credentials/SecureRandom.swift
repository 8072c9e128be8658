import CSodium

/// Random bytes and identifiers from libsodium's generator (randombytes_buf: the kernel's getrandom or
/// /dev/urandom), fit for secrets.
public enum SecureRandom {
    /// `count` random bytes (randombytes_buf).
    ///
    /// - Parameter count: how many bytes, 0 or more.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "a negative number of random bytes")
        Sodium.ensureInitialized()
        var bytes = [UInt8](repeating: 0, count: count)
        if count > 0 {
            randombytes_buf(&bytes, count)
        }
        return bytes
    }

    /// `bytes` random bytes as lowercase hex (2 characters per byte), for guest ids and session ids.
    ///
    /// - Parameter bytes: how many random bytes, 0 or more; 16 (128 bits) by default, enough that ids
    ///   never collide.
    /// - Returns: e.g. `"3f9a0c2e7b1d45a8e0c6f2b9d8a71e04"` for 16 bytes.
    public static func identifier(bytes: Int = 16) -> String {
        hex(self.bytes(bytes))
    }

    /// `bytes` as lowercase hex (sodium_bin2hex, which takes the same time whatever the bytes).
    static func hex(_ bytes: [UInt8]) -> String {
        guard !bytes.isEmpty else { return "" }
        var hex = [CChar](repeating: 0, count: bytes.count * 2 + 1)
        sodium_bin2hex(&hex, hex.count, bytes, bytes.count)
        return hex.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
