import CSodium

/// Hashes passwords with Argon2id (libsodium's crypto_pwhash) and checks passwords against those hashes.
///
/// ```swift
/// let hasher = PasswordHasher()
/// let stored = try hasher.hash("correct horse battery staple")   // "$argon2id$v=19$m=65536,t=2,p=1$…"
/// hasher.verify("correct horse battery staple", against: stored)  // true
/// ```
///
/// A hash is libsodium's encoded string: it holds the algorithm, the cost and a random salt beside the
/// digest, so it is all there is to store, and two hashes of one password differ.
///
/// Passwords are hashed as their UTF-8 bytes, as given: no Unicode normalization, no trimming. They
/// must hold 1 to `maximumPasswordBytes` bytes.
///
/// `hash`, `verify` and `verifyWithoutAccount` are CPU-heavy and block their thread for tens of
/// milliseconds at `Cost.standard` (each also holds the cost's memory, 64 MiB, while it runs). Call them
/// off the main actor (e.g. from a `@concurrent` function or a detached task), and bound how many run at
/// once.
public struct PasswordHasher: Sendable {
    /// The longest password accepted, in UTF-8 bytes: 1024. Longer passwords add nothing against guessing
    /// and cost hashing time that an attacker could ask for.
    public static let maximumPasswordBytes = 1024

    /// The work each new hash takes, and the cost `needsRehash(_:)` compares hashes with.
    public let cost: Cost

    /// A hasher that makes hashes of this cost.
    ///
    /// - Parameter cost: `.standard` for real passwords; `.minimum` in unit tests only.
    public init(cost: Cost = .standard) {
        self.cost = cost
    }

    /// Hashes a password with Argon2id at this hasher's cost and a new random salt
    /// (crypto_pwhash_str_alg with crypto_pwhash_ALG_ARGON2ID13).
    ///
    /// Blocks for tens of milliseconds at `.standard` cost: call it off the main actor.
    ///
    /// - Parameter password: the password, 1 to `maximumPasswordBytes` UTF-8 bytes.
    /// - Returns: the encoded hash to store, e.g. `$argon2id$v=19$m=65536,t=2,p=1$<salt>$<digest>`
    ///   (ASCII, under 128 characters).
    /// - Throws: `CredentialsError.emptyPassword` or `.passwordTooLong` for a password out of bounds,
    ///   `.hashingFailed` when libsodium cannot hash (out of memory, or a cost outside its limits).
    public func hash(_ password: String) throws -> String {
        Sodium.ensureInitialized()
        let length = password.utf8.count
        guard length > 0 else { throw CredentialsError.emptyPassword }
        guard length <= Self.maximumPasswordBytes else { throw CredentialsError.passwordTooLong }
        var encoded = [CChar](repeating: 0, count: cs_pwhash_strbytes())
        let status = Self.withBytes(of: password) { bytes, count in
            crypto_pwhash_str_alg(&encoded, bytes, count, cost.operations, cost.memoryBytes, cs_pwhash_alg_argon2id13())
        }
        guard status == 0 else { throw CredentialsError.hashingFailed }
        return encoded.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Whether `password` is the one `encoded` was made from (crypto_pwhash_str_verify).
    ///
    /// The hash's own cost is used, not this hasher's, so hashes made with an older cost still verify.
    /// Blocks as long as a `hash` of that cost: call it off the main actor.
    ///
    /// - Parameters:
    ///   - password: the password to check.
    ///   - encoded: a hash returned by `hash(_:)`.
    /// - Returns: true when the password matches. False when it does not, when the password is empty or
    ///   longer than `maximumPasswordBytes` (no stored hash can match it), and when `encoded` is not a
    ///   well-formed hash (truncated, garbage, embedded NUL); never traps.
    public func verify(_ password: String, against encoded: String) -> Bool {
        Sodium.ensureInitialized()
        guard Self.isAcceptable(password), let encoded = Self.cString(encoded) else { return false }
        let status = Self.withBytes(of: password) { bytes, count in
            crypto_pwhash_str_verify(encoded, bytes, count)
        }
        return status == 0
    }

    /// Whether `encoded` should be replaced by a new hash of the same password: it was made with another
    /// cost than this hasher's, with another algorithm than Argon2id, or it is not a well-formed hash
    /// (crypto_pwhash_str_needs_rehash).
    ///
    /// Cheap: it reads the encoding's parameters, it does not hash (so it does not tell whether the digest
    /// part is right; `verify` does). Rehash after a successful `verify`, when the password is at hand.
    ///
    /// - Parameter encoded: a stored hash.
    /// - Returns: false only for a well-formed Argon2id encoding of exactly this hasher's cost.
    public func needsRehash(_ encoded: String) -> Bool {
        Sodium.ensureInitialized()
        guard encoded.hasPrefix(Self.argon2idPrefix), let encoded = Self.cString(encoded) else { return true }
        return crypto_pwhash_str_needs_rehash(encoded, cost.operations, cost.memoryBytes) != 0
    }

    /// Spends the work of a `verify` that fails, for a sign-in whose account does not exist, so that it
    /// takes as long as a wrong password for an account that does (and the response time does not tell
    /// which emails have accounts).
    ///
    /// It verifies `password` against a hash of a random password at this hasher's cost: built in for
    /// ``Cost/standard``, made on the first call for other costs (that first call takes one hash longer). A password
    /// `verify` would refuse without hashing (empty, too long) is refused here without hashing too.
    /// Hashes stored with an older cost take that cost's time, not this one's.
    ///
    /// - Parameter password: the password the client sent.
    public func verifyWithoutAccount(_ password: String) {
        guard let decoy = DecoyHashes.hash(for: cost) else { return }
        _ = verify(password, against: decoy)
    }

    /// libsodium's prefix for Argon2id hashes (crypto_pwhash_argon2id_STRPREFIX).
    static let argon2idPrefix = "$argon2id$"

    /// Whether a password is within the bounds `hash` accepts.
    private static func isAcceptable(_ password: String) -> Bool {
        (1...maximumPasswordBytes).contains(password.utf8.count)
    }

    /// `encoded` as a NUL-terminated C string, or nil when it cannot be a hash libsodium wrote: longer than
    /// crypto_pwhash_STRBYTES - 1 bytes, or holding a NUL (which would hide what follows it from
    /// libsodium).
    private static func cString(_ encoded: String) -> [CChar]? {
        let utf8 = encoded.utf8
        guard utf8.count < cs_pwhash_strbytes(), !utf8.contains(0) else { return nil }
        return utf8.map { CChar(bitPattern: $0) } + [0]
    }

    /// Runs `body` with a copy of the password's UTF-8 bytes and their count, then wipes the copy
    /// (sodium_memzero). The bytes may contain NUL: libsodium takes a length.
    private static func withBytes<Result>(
        of password: String, _ body: (UnsafePointer<CChar>, UInt64) -> Result
    ) -> Result {
        var bytes = password.utf8.map { CChar(bitPattern: $0) }
        defer { sodium_memzero(&bytes, bytes.count) }
        return bytes.withUnsafeBufferPointer { body($0.baseAddress!, UInt64($0.count)) }
    }
}
